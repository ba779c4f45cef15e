//! Reading byte ranges of a file by offset (`pread`), never through a shared cursor, so that several
//! threads read one archive at once: [`RangeReader`] walks a layer's tar headers and seeks over file
//! contents, [`RangeBytes`] hands one file inside it to the content probe (seeking both ways, so the
//! ELF reader's second pass can go back), and [`hash_range`] digests the whole range in large reads.

use crate::unix_fs::FileExt;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

use sha2::{Digest, Sha256};

use super::facts::FileBytes;
use super::layer::sha256_name;

/// Bytes read at a time while hashing: large enough that the hash, not the system call, is the cost.
const HASH_CHUNK: usize = 4 << 20;
/// Buffer of a tar walk: a run of small files and their headers is read in one call.
const WALK_BUFFER: usize = 64 << 10;
/// Buffer of one probed file: the ELF reader reads a header, then strings byte by byte.
const PROBE_BUFFER: usize = 8 << 10;

/// A buffered window on `[start, start + len)` of a file.
struct Window<'f> {
    file: &'f File,
    start: u64,
    len: u64,
    /// Offset (from `start`) of the next byte to read.
    position: u64,
    buffer: Vec<u8>,
    /// Offset (from `start`) of `buffer[0]`, and how many bytes of `buffer` are valid.
    buffered_at: u64,
    buffered: usize,
}

impl<'f> Window<'f> {
    fn new(file: &'f File, start: u64, len: u64, capacity: usize) -> Window<'f> {
        Window {
            file,
            start,
            len,
            position: 0,
            buffer: vec![0; capacity],
            buffered_at: 0,
            buffered: 0,
        }
    }

    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.position >= self.len || out.is_empty() {
            return Ok(0);
        }
        let in_buffer = self.position >= self.buffered_at
            && self.position < self.buffered_at + self.buffered as u64;
        let left = self.len - self.position;
        if !in_buffer {
            // A read as large as the buffer goes straight to the caller.
            if out.len() >= self.buffer.len() {
                let want = (out.len() as u64).min(left) as usize;
                let read = self
                    .file
                    .read_at(&mut out[..want], self.start + self.position)?;
                self.position += read as u64;
                return Ok(read);
            }
            let want = left.min(self.buffer.len() as u64) as usize;
            let read = self
                .file
                .read_at(&mut self.buffer[..want], self.start + self.position)?;
            if read == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            self.buffered_at = self.position;
            self.buffered = read;
        }
        let from = (self.position - self.buffered_at) as usize;
        let available = &self.buffer[from..self.buffered];
        let count = available.len().min(out.len());
        out[..count].copy_from_slice(&available[..count]);
        self.position += count as u64;
        Ok(count)
    }

    fn seek_to(&mut self, position: i128) -> io::Result<u64> {
        if position < 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek before the start of the range",
            ));
        }
        self.position = u64::try_from(position).unwrap_or(u64::MAX);
        Ok(self.position)
    }
}

/// `Read + Seek` over one range of a file, for a tar walk that seeks over contents.
pub struct RangeReader<'f>(Window<'f>);

impl<'f> RangeReader<'f> {
    pub fn new(file: &'f File, start: u64, len: u64) -> RangeReader<'f> {
        RangeReader(Window::new(file, start, len, WALK_BUFFER))
    }
}

impl Read for RangeReader<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.0.read(out)
    }
}

impl Seek for RangeReader<'_> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(offset) => i128::from(offset),
            SeekFrom::Current(delta) => i128::from(self.0.position) + i128::from(delta),
            SeekFrom::End(delta) => i128::from(self.0.len) + i128::from(delta),
        };
        self.0.seek_to(target)
    }
}

/// One file's bytes inside a file (a layer member), as the content probe reads them.
pub struct RangeBytes<'f>(Window<'f>);

impl<'f> RangeBytes<'f> {
    pub fn new(file: &'f File, start: u64, len: u64) -> RangeBytes<'f> {
        RangeBytes(Window::new(file, start, len, PROBE_BUFFER))
    }
}

impl Read for RangeBytes<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.0.read(out)
    }
}

impl FileBytes for RangeBytes<'_> {
    fn size(&self) -> u64 {
        self.0.len
    }
    fn position(&self) -> u64 {
        self.0.position
    }
    fn skip_to(&mut self, offset: u64) -> io::Result<()> {
        if offset < self.0.position {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "cannot skip backwards",
            ));
        }
        self.0.position = offset;
        Ok(())
    }
    fn rewind(&mut self) -> io::Result<bool> {
        self.0.position = 0;
        Ok(true)
    }
    fn random_access(&self) -> bool {
        true
    }
}

/// `sha256:…` of `[start, start + len)` of `file`; fails when the file is shorter.
pub fn hash_range(file: &File, start: u64, len: u64) -> io::Result<String> {
    let mut hasher = Sha256::new();
    let mut chunk = vec![0u8; HASH_CHUNK.min(len as usize).max(1)];
    let mut done = 0u64;
    while done < len {
        let want = (len - done).min(chunk.len() as u64) as usize;
        file.read_exact_at(&mut chunk[..want], start + done)?;
        hasher.update(&chunk[..want]);
        done += want as u64;
    }
    Ok(sha256_name(hasher.finalize().as_slice()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A file holding `bytes`, already unlinked: it goes when the handle does.
    fn file_with(bytes: &[u8]) -> File {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "cudalint-positional-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let mut file = File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .unwrap();
        std::fs::remove_file(&path).unwrap();
        file.write_all(bytes).unwrap();
        file
    }

    #[test]
    fn a_range_reader_sees_only_its_range_and_seeks_both_ways() {
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let file = file_with(&bytes);
        let mut reader = RangeReader::new(&file, 1000, 150_000);
        let mut first = [0u8; 10];
        reader.read_exact(&mut first).unwrap();
        assert_eq!(first, bytes[1000..1010]);
        reader.seek(SeekFrom::Current(100_000)).unwrap();
        let mut later = [0u8; 10];
        reader.read_exact(&mut later).unwrap();
        assert_eq!(later, bytes[101_010..101_020]);
        reader.seek(SeekFrom::Start(5)).unwrap();
        reader.read_exact(&mut first).unwrap();
        assert_eq!(first, bytes[1005..1015]);
        let mut rest = Vec::new();
        reader.seek(SeekFrom::End(-3)).unwrap();
        reader.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, bytes[150_997..151_000]);
        assert!(reader.seek(SeekFrom::Current(-1_000_000)).is_err());
    }

    #[test]
    fn range_bytes_rewind_and_a_large_read_bypasses_the_buffer() {
        let bytes: Vec<u8> = (0..50_000u32).map(|i| (i % 7) as u8).collect();
        let file = file_with(&bytes);
        let mut member = RangeBytes::new(&file, 7, 40_000);
        let mut all = vec![0u8; 40_000];
        member.read_exact(&mut all).unwrap();
        assert_eq!(all, bytes[7..40_007]);
        assert_eq!(member.read(&mut all).unwrap(), 0);
        assert!(member.rewind().unwrap());
        member.skip_to(39_998).unwrap();
        let mut tail = Vec::new();
        member.read_to_end(&mut tail).unwrap();
        assert_eq!(tail, bytes[40_005..40_007]);
        assert!(member.skip_to(3).is_err());
    }

    #[test]
    fn hash_range_matches_a_whole_hash_and_fails_short() {
        let bytes: Vec<u8> = (0..9_000_000u32).map(|i| (i % 13) as u8).collect();
        let file = file_with(&bytes);
        let expected = sha256_name(Sha256::digest(&bytes[3..8_999_000]).as_slice());
        assert_eq!(hash_range(&file, 3, 8_998_997).unwrap(), expected);
        assert!(hash_range(&file, 3, 9_000_000).is_err());
    }
}
