//! The build request to the Docker engine (bollard): the context tar streamed from a writer thread
//! as the engine reads it, the classic builder (BuildKit needs a session the Docker 20.10 API can
//! do without), the engine's progress lines copied to the user live, and the built image's ID from
//! the final `aux` message.
//!
//! The endpoint is found as `cudalint image` finds it (`DOCKER_HOST`, TLS from
//! `DOCKER_TLS_VERIFY`/`DOCKER_CERT_PATH`, else the current docker context, else the default
//! socket), and the API version is negotiated, so Docker 20.10 (API 1.41) and later work.

use std::collections::HashMap;
use std::io::{self, Write};
use std::time::Duration;

use anyhow::{anyhow, Context};
use bollard::errors::Error as EngineError;
use bollard::query_parameters::{BuildImageOptions, BuilderVersion};
use bollard::Docker;
use futures_util::StreamExt;

use super::context::BuildContext;
use crate::dockerfile::platform::Platform;

/// How long a request may wait for the engine's first answer: a build answers once the whole
/// context has arrived, which for a large context over a slow link takes a while.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(3600);
/// Context bytes per chunk sent, and chunks in flight between the tar writer and the request.
const CHUNK_BYTES: usize = 256 << 10;
const CHUNKS_IN_FLIGHT: usize = 16;

/// A connection to the engine that builds.
pub struct EngineClient {
    runtime: tokio::runtime::Runtime,
    docker: Docker,
    /// Where it is, for messages.
    pub endpoint: String,
    /// The engine's own platform (what a build without `--platform` is for).
    pub platform: Option<Platform>,
}

/// What to build, as the engine's build request takes it.
#[derive(Debug, Clone, Default)]
pub struct BuildRequest {
    pub tag: Option<String>,
    pub build_args: Vec<(String, String)>,
    pub target: Option<String>,
    pub platform: Option<Platform>,
}

impl EngineClient {
    /// Connect and agree on an API version.
    pub fn connect() -> anyhow::Result<EngineClient> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the engine client")?;
        let (docker, endpoint) =
            crate::image::source::engine::connect_with_timeout(REQUEST_TIMEOUT.as_secs())?;
        let docker = runtime
            .block_on(docker.with_timeout(REQUEST_TIMEOUT).negotiate_version())
            .with_context(|| format!("cannot reach the Docker engine at {endpoint}"))?;
        let version = runtime
            .block_on(docker.version())
            .with_context(|| format!("asking the Docker engine at {endpoint} for its version"))?;
        let platform = match (version.os, version.arch) {
            (Some(os), Some(arch)) => Platform::parse(&format!("{os}/{arch}")).ok(),
            _ => None,
        };
        Ok(EngineClient {
            runtime,
            docker,
            endpoint,
            platform,
        })
    }

    /// Build `context`, copying the engine's output to `log` as it comes; returns the image ID.
    /// The engine's own error text (a failing `RUN`, a bad instruction) is the error's message.
    pub fn build(
        &self,
        context: &BuildContext,
        request: &BuildRequest,
        log: &mut dyn Write,
    ) -> anyhow::Result<String> {
        let options = BuildImageOptions {
            dockerfile: context.dockerfile_name().to_string(),
            t: request.tag.clone(),
            buildargs: Some(
                request
                    .build_args
                    .iter()
                    .cloned()
                    .collect::<HashMap<_, _>>(),
            ),
            target: request.target.clone().unwrap_or_default(),
            platform: request
                .platform
                .as_ref()
                .map(Platform::to_string)
                .unwrap_or_default(),
            // As `docker build`: intermediate containers removed; and removed after a failed
            // step too, so that a failed build leaves nothing behind in the engine but its
            // cached layers.
            rm: true,
            forcerm: true,
            version: BuilderVersion::BuilderV1,
            ..Default::default()
        };
        let (sender, mut receiver) =
            tokio::sync::mpsc::channel::<io::Result<Vec<u8>>>(CHUNKS_IN_FLIGHT);
        let body = futures_util::stream::poll_fn(move |cx| receiver.poll_recv(cx))
            .map(|chunk| chunk.map(Into::into));

        std::thread::scope(|scope| {
            let writer = scope.spawn(move || {
                let mut chunks = ChunkSender {
                    sender: sender.clone(),
                    buffer: Vec::with_capacity(CHUNK_BYTES),
                };
                let written = context.write_tar(&mut chunks);
                if let Err(error) = &written {
                    // Fail the upload, so that the engine does not build a truncated context.
                    let _ =
                        sender.blocking_send(Err(io::Error::new(error.kind(), error.to_string())));
                }
                written
            });
            let built = self.runtime.block_on(async {
                let mut stream =
                    self.docker
                        .build_image(options, None, Some(bollard::body_try_stream(body)));
                let mut image_id = None;
                while let Some(message) = stream.next().await {
                    let info = message?;
                    if let Some(text) = &info.stream {
                        log.write_all(text.as_bytes())?;
                        if let Some(id) = text.trim().strip_prefix("Successfully built ") {
                            image_id.get_or_insert_with(|| id.to_string());
                        }
                    }
                    if let Some(status) = &info.status {
                        let id = info
                            .id
                            .as_deref()
                            .map(|id| format!("{id}: "))
                            .unwrap_or_default();
                        writeln!(log, "{id}{status}")?;
                    }
                    if let Some(id) = info.aux.and_then(|aux| aux.id) {
                        image_id = Some(id);
                    }
                    log.flush()?;
                }
                anyhow::Ok(image_id)
            });
            let written = writer
                .join()
                .map_err(|_| anyhow!("the build context writer panicked"))?;
            match (built, written) {
                (Ok(Some(id)), _) => Ok(id),
                (Ok(None), _) => Err(anyhow!(
                    "the engine at {} finished without naming the image it built",
                    self.endpoint
                )),
                // The context could not be read: that, not the engine's complaint about the
                // broken upload, is the cause.
                (Err(_), Err(error)) if error.kind() != io::ErrorKind::BrokenPipe => {
                    Err(anyhow::Error::new(error).context("cannot send the build context"))
                }
                (Err(error), _) => Err(engine_failure(error, &self.endpoint)),
            }
        })
    }
}

/// The message of a failed build: the engine's own text when it gave one.
fn engine_failure(error: anyhow::Error, endpoint: &str) -> anyhow::Error {
    match error.downcast::<EngineError>() {
        Ok(EngineError::DockerStreamError { error }) => anyhow!("the build failed: {error}"),
        Ok(EngineError::DockerResponseServerError {
            status_code,
            message,
        }) => anyhow!("the engine at {endpoint} refused the build ({status_code}): {message}"),
        Ok(other) => anyhow::Error::new(other)
            .context(format!("the build at the engine at {endpoint} failed")),
        Err(other) => other.context("the build failed"),
    }
}

/// A `Write` that hands the tar to the request in chunks.
struct ChunkSender {
    sender: tokio::sync::mpsc::Sender<io::Result<Vec<u8>>>,
    buffer: Vec<u8>,
}

impl ChunkSender {
    fn send_buffer(&mut self) -> io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::replace(&mut self.buffer, Vec::with_capacity(CHUNK_BYTES));
        self.sender
            .blocking_send(Ok(chunk))
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the engine stopped reading"))
    }
}

impl Write for ChunkSender {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let room = CHUNK_BYTES - self.buffer.len();
        let count = bytes.len().min(room);
        self.buffer.extend_from_slice(&bytes[..count]);
        if self.buffer.len() == CHUNK_BYTES {
            self.send_buffer()?;
        }
        Ok(count)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send_buffer()
    }
}
