//! The Unix file-system extensions the image and build halves read (positional reads, metadata's
//! mode, device and inode, special file types), on every host. On Unix they are std's own traits;
//! elsewhere (Windows) the same methods with what a non-Unix file system can say: positional reads
//! through `seek_read`, no device or inode numbers (0), modes from the read-only flag, no special
//! files. That keeps the Dockerfile half and archive reading identical everywhere; what degrades on
//! Windows is only what needs Unix metadata (a `rootfs:` directory's modes, a build context's).

#[cfg(unix)]
pub use std::os::unix::ffi::OsStrExt;
#[cfg(unix)]
pub use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt};

#[cfg(not(unix))]
pub use fallback::{FileExt, FileTypeExt, MetadataExt, OsStrExt};

#[cfg(not(unix))]
mod fallback {
    use std::ffi::OsStr;
    use std::fs::{File, FileType, Metadata};
    use std::io;
    use std::time::UNIX_EPOCH;

    pub trait FileExt {
        fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;

        fn read_exact_at(&self, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
            while !buf.is_empty() {
                match self.read_at(buf, offset) {
                    Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                    Ok(n) => {
                        buf = &mut buf[n..];
                        offset += n as u64;
                    }
                    Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                    Err(error) => return Err(error),
                }
            }
            Ok(())
        }
    }

    impl FileExt for File {
        #[cfg(windows)]
        fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
            std::os::windows::fs::FileExt::seek_read(self, buf, offset)
        }

        #[cfg(not(windows))]
        fn read_at(&self, _buf: &mut [u8], _offset: u64) -> io::Result<usize> {
            Err(io::ErrorKind::Unsupported.into())
        }
    }

    pub trait MetadataExt {
        fn dev(&self) -> u64;
        fn ino(&self) -> u64;
        fn rdev(&self) -> u64;
        fn nlink(&self) -> u64;
        fn mode(&self) -> u32;
        fn mtime(&self) -> i64;
        fn mtime_nsec(&self) -> i64;
        fn ctime(&self) -> i64;
        fn ctime_nsec(&self) -> i64;
    }

    fn since_epoch(time: io::Result<std::time::SystemTime>) -> std::time::Duration {
        time.ok()
            .and_then(|time| time.duration_since(UNIX_EPOCH).ok())
            .unwrap_or_default()
    }

    impl MetadataExt for Metadata {
        fn dev(&self) -> u64 {
            0
        }
        fn ino(&self) -> u64 {
            0
        }
        fn rdev(&self) -> u64 {
            0
        }
        fn nlink(&self) -> u64 {
            1
        }
        fn mode(&self) -> u32 {
            let kind = if self.is_dir() { 0o040000 } else { 0o100000 };
            let permissions = match (self.is_dir(), self.permissions().readonly()) {
                (true, _) => 0o755,
                (false, true) => 0o444,
                (false, false) => 0o644,
            };
            kind | permissions
        }
        fn mtime(&self) -> i64 {
            since_epoch(self.modified()).as_secs() as i64
        }
        fn mtime_nsec(&self) -> i64 {
            i64::from(since_epoch(self.modified()).subsec_nanos())
        }
        fn ctime(&self) -> i64 {
            self.mtime()
        }
        fn ctime_nsec(&self) -> i64 {
            self.mtime_nsec()
        }
    }

    pub trait FileTypeExt {
        fn is_fifo(&self) -> bool;
        fn is_char_device(&self) -> bool;
        fn is_block_device(&self) -> bool;
        fn is_socket(&self) -> bool;
    }

    impl FileTypeExt for FileType {
        fn is_fifo(&self) -> bool {
            false
        }
        fn is_char_device(&self) -> bool {
            false
        }
        fn is_block_device(&self) -> bool {
            false
        }
        fn is_socket(&self) -> bool {
            false
        }
    }

    pub trait OsStrExt {
        fn as_bytes(&self) -> &[u8];
    }

    impl OsStrExt for OsStr {
        fn as_bytes(&self) -> &[u8] {
            self.as_encoded_bytes()
        }
    }
}
