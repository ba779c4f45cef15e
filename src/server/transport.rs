//! The wire: LSP's base protocol (`Content-Length` headers, then a JSON-RPC
//! body) over stdin and stdout.
//!
//! A reader thread turns stdin into [`Incoming`] messages on a bounded
//! channel, so reading and JSON parsing overlap linting, and a flood of
//! edits waits in the pipe rather than in our memory. A frame that cannot be
//! read (no `Content-Length`, a body that is not JSON) becomes
//! [`Incoming::Malformed`] and the reader carries on with the next frame; a
//! body larger than [`MAX_FRAME_BYTES`] is skipped without being held in
//! memory. End of input is [`Incoming::Closed`]: the client is gone.

use std::io::{self, BufRead, Read, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use serde_json::Value;

/// The largest frame body read: twice the largest Dockerfile cudalint lints
/// (JSON escaping can double a text), plus room for the envelope.
pub const MAX_FRAME_BYTES: usize = 2 * crate::engine::MAX_INPUT_BYTES as usize + (1 << 20);

/// How many read messages may wait for the server loop.
const QUEUE_DEPTH: usize = 256;

/// What the reader thread hands the server loop.
#[derive(Debug)]
pub enum Incoming {
    /// A JSON-RPC message (request, response or notification).
    Message(Value),
    /// A frame that could not be read as JSON-RPC, and why.
    Malformed(String),
    /// Standard input ended (or failed): the client is gone.
    Closed,
}

/// Start the reader thread on `input`; messages arrive on the returned
/// channel, [`Incoming::Closed`] last.
pub fn spawn_reader(input: impl Read + Send + 'static) -> Receiver<Incoming> {
    let (sender, receiver) = sync_channel(QUEUE_DEPTH);
    std::thread::Builder::new()
        .name("lsp-reader".into())
        .spawn(move || read_frames(io::BufReader::with_capacity(1 << 16, input), &sender))
        .expect("cannot start the LSP reader thread");
    receiver
}

fn read_frames(mut input: impl BufRead, sender: &SyncSender<Incoming>) {
    loop {
        let incoming = match read_frame(&mut input) {
            Ok(Some(Frame::Body(body))) => match serde_json::from_slice::<Value>(&body) {
                Ok(message) if message.is_object() => Incoming::Message(message),
                Ok(_) => Incoming::Malformed("the message is not a JSON object".into()),
                Err(error) => Incoming::Malformed(format!("the message is not JSON: {error}")),
            },
            Ok(Some(Frame::Bad(reason))) => Incoming::Malformed(reason),
            Ok(None) | Err(_) => {
                let _ = sender.send(Incoming::Closed);
                return;
            }
        };
        if sender.send(incoming).is_err() {
            return;
        }
    }
}

enum Frame {
    Body(Vec<u8>),
    Bad(String),
}

/// One frame: headers up to an empty line, then `Content-Length` bytes.
/// `Ok(None)` at end of input.
fn read_frame(input: &mut impl BufRead) -> io::Result<Option<Frame>> {
    let mut length: Option<Result<usize, String>> = None;
    let mut line = Vec::new();
    let mut saw_header = false;
    loop {
        line.clear();
        // A header line is short; a longer one is garbage, read in pieces.
        let read = input.by_ref().take(8192).read_until(b'\n', &mut line)?;
        if read == 0 {
            return Ok(None);
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if saw_header {
                break;
            }
            continue;
        }
        saw_header = true;
        if let Some((name, value)) = text.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = Some(
                    value
                        .trim()
                        .parse::<usize>()
                        .map_err(|_| format!("bad Content-Length `{}`", value.trim())),
                );
            }
        }
    }
    let length = match length {
        None => return Ok(Some(Frame::Bad("a frame without Content-Length".into()))),
        Some(Err(reason)) => return Ok(Some(Frame::Bad(reason))),
        Some(Ok(length)) => length,
    };
    if length > MAX_FRAME_BYTES {
        let skipped = io::copy(&mut input.by_ref().take(length as u64), &mut io::sink())?;
        if skipped < length as u64 {
            return Ok(None);
        }
        return Ok(Some(Frame::Bad(format!(
            "a frame of {length} bytes, more than the {MAX_FRAME_BYTES} read"
        ))));
    }
    let mut body = Vec::with_capacity(length.min(1 << 20));
    input.by_ref().take(length as u64).read_to_end(&mut body)?;
    if body.len() < length {
        return Ok(None);
    }
    Ok(Some(Frame::Body(body)))
}

/// Writes framed messages to the client.
pub struct Writer<W: Write> {
    out: W,
}

impl<W: Write> Writer<W> {
    pub fn new(out: W) -> Self {
        Writer { out }
    }

    /// Send one message; an error means the client is gone.
    pub fn send(&mut self, message: &Value) -> io::Result<()> {
        let body = serde_json::to_vec(message)?;
        write!(self.out, "Content-Length: {}\r\n\r\n", body.len())?;
        self.out.write_all(&body)?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &str) -> Vec<String> {
        let receiver = spawn_reader(io::Cursor::new(input.as_bytes().to_vec()));
        receiver
            .iter()
            .map(|incoming| match incoming {
                Incoming::Message(value) => value.to_string(),
                Incoming::Malformed(reason) => format!("malformed: {reason}"),
                Incoming::Closed => "closed".into(),
            })
            .collect()
    }

    #[test]
    fn reads_frames_and_survives_bad_ones() {
        let got = frames(
            "Content-Length: 8\r\n\r\n{\"a\":1}\nContent-Length: 3\r\n\r\nnopContent-Type: x\r\n\r\nContent-Length: 7\r\n\r\n{\"b\":2}",
        );
        assert_eq!(got[0], "{\"a\":1}");
        assert!(
            got[1].starts_with("malformed: the message is not JSON"),
            "{got:?}"
        );
        assert_eq!(got[2], "malformed: a frame without Content-Length");
        assert_eq!(got[3], "{\"b\":2}");
        assert_eq!(got[4], "closed");
    }

    #[test]
    fn a_truncated_frame_ends_the_input() {
        assert_eq!(frames("Content-Length: 80\r\n\r\n{\"a\""), ["closed"]);
    }
}
