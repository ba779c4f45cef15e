//! Decoding a compressed layer on a thread of its own. Inflating a gzip (or zstd) blob and hashing
//! and walking the tar it holds each cost about as much CPU as the other, and one layer is often
//! most of an image (torch's pip layer: 5.6 GB of 5.9). So the blob is read, hashed and decoded on
//! one thread while the caller's thread hashes and walks the tar: two cores for one layer. The
//! decoded bytes cross over in chunks through a bounded channel, so memory stays a few MiB per layer
//! whatever its size; a reader that stops early ends the decoder at its next chunk.

use std::io::{self, Read};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender as ReturnSender, SyncSender};

/// Decoded bytes handed over at a time: large enough that the channel costs nothing next to the
/// work on either side.
const CHUNK_BYTES: usize = 256 * 1024;
/// Chunks in flight: the decoder runs ahead of the reader by at most this many.
const CHUNKS_IN_FLIGHT: usize = 8;

/// Runs `decode` on a thread of its own, its output written to a [`Sender`], while `consume` reads
/// that output on this thread as a plain [`Read`]. Returns both results; `consume`'s reader sees
/// the decoder's read errors as its own.
pub fn decode_beside<T, U>(
    decode: impl FnOnce(&mut Sender) -> anyhow::Result<T> + Send,
    consume: impl FnOnce(ChunkReader) -> anyhow::Result<U>,
) -> (anyhow::Result<T>, anyhow::Result<U>)
where
    T: Send,
{
    let (chunks, receiver) = sync_channel(CHUNKS_IN_FLIGHT);
    let (returned, spent) = channel();
    std::thread::scope(|scope| {
        let decoder = scope.spawn(move || {
            let mut sender = Sender { chunks, spent };
            decode(&mut sender)
        });
        // `consume` drops its reader before the join: a decoder blocked on a full channel then
        // sees the channel closed and stops.
        let consumed = consume(ChunkReader::new(receiver).returning(returned));
        let decoded = decoder
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the layer decoder failed")));
        (decoded, consumed)
    })
}

/// The decoder's end of the channel.
pub struct Sender {
    chunks: SyncSender<io::Result<Vec<u8>>>,
    /// Chunks the reader is done with, to be filled again (a new one would be zeroed first).
    spent: Receiver<Vec<u8>>,
}

impl Sender {
    /// Reads `decoded` to its end, handing its bytes over in chunks. A read error is handed over
    /// too (the reader reports it where it read) and returned. Returns `Ok(false)` when the reader
    /// has gone: it has read all it wants.
    pub fn send_all(&mut self, decoded: &mut impl Read) -> io::Result<bool> {
        loop {
            let mut chunk = self.spent.try_recv().unwrap_or_default();
            chunk.resize(CHUNK_BYTES, 0);
            let filled = match fill(decoded, &mut chunk) {
                Ok(filled) => filled,
                Err(error) => {
                    let handed = io::Error::new(error.kind(), error.to_string());
                    let _ = self.chunks.send(Err(handed));
                    return Err(error);
                }
            };
            if filled == 0 {
                return Ok(true);
            }
            chunk.truncate(filled);
            if self.chunks.send(Ok(chunk)).is_err() {
                return Ok(false);
            }
        }
    }
}

/// Reads into `buf` until it is full or the stream ends; returns how much it holds.
fn fill(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(read) => filled += read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(filled)
}

/// The reading end: a stream arriving as chunks on a channel (here the decoded tar; the engine's
/// export too), chunk after chunk; it ends when the sending side is dropped.
pub struct ChunkReader {
    chunks: Receiver<io::Result<Vec<u8>>>,
    /// Where chunks this reader is done with go back to be filled again, if anywhere.
    returned: Option<ReturnSender<Vec<u8>>>,
    current: Vec<u8>,
    offset: usize,
}

impl ChunkReader {
    pub fn new(chunks: Receiver<io::Result<Vec<u8>>>) -> Self {
        ChunkReader {
            chunks,
            returned: None,
            current: Vec::new(),
            offset: 0,
        }
    }

    /// Hands each chunk it is done with back through `returned`.
    fn returning(mut self, returned: ReturnSender<Vec<u8>>) -> Self {
        self.returned = Some(returned);
        self
    }
}

impl Read for ChunkReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.offset == self.current.len() {
            match self.chunks.recv() {
                Ok(chunk) => {
                    let spent = std::mem::replace(&mut self.current, chunk?);
                    if let Some(returned) = &self.returned {
                        // The decoder may have finished: then the chunk is simply dropped.
                        let _ = returned.send(spent);
                    }
                    self.offset = 0;
                }
                // The sender is done (or failed, and said so in the chunk before).
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len() - self.offset);
        buf[..n].copy_from_slice(&self.current[self.offset..self.offset + n]);
        self.offset += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reader_gets_every_byte_in_order() {
        let data: Vec<u8> = (0..3 * CHUNK_BYTES + 17).map(|i| (i % 251) as u8).collect();
        let (decoded, consumed) = decode_beside(
            |sender| Ok(sender.send_all(&mut data.as_slice())?),
            |mut reader| {
                let mut out = Vec::new();
                reader.read_to_end(&mut out)?;
                Ok(out)
            },
        );
        assert!(decoded.unwrap());
        assert_eq!(consumed.unwrap(), data);
    }

    #[test]
    fn a_decoder_error_reaches_the_reader() {
        struct Broken;
        impl Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "corrupt deflate stream",
                ))
            }
        }
        let (decoded, consumed) = decode_beside(
            |sender| Ok(sender.send_all(&mut Broken)?),
            |mut reader| Ok(reader.read_to_end(&mut Vec::new())?),
        );
        assert!(decoded.is_err());
        let error = consumed.unwrap_err().to_string();
        assert!(error.contains("corrupt deflate stream"), "{error}");
    }

    #[test]
    fn a_reader_that_stops_early_ends_the_decoder() {
        // Far more than the channel holds: the decoder must notice the reader has gone.
        let mut endless = io::repeat(7);
        let (decoded, consumed) = decode_beside(
            |sender| Ok(sender.send_all(&mut endless)?),
            |mut reader| {
                let mut first = [0u8; 10];
                reader.read_exact(&mut first)?;
                Ok(first)
            },
        );
        assert!(!decoded.unwrap());
        assert_eq!(consumed.unwrap(), [7u8; 10]);
    }
}
