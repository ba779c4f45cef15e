//! Feeds arbitrary bytes to the ELF reader through a forward-only `FileBytes` (a backward seek
//! panics), as a stream and as a random-access file (which may start over, and whose GPU code is
//! read through the section table), in both the near and the far mode, and the second pass on
//! whatever it left unread. It must never panic, and every string it returns is at most
//! `max_string` bytes (a search path list `max_path_list`) before an invalid byte is replaced.
#![no_main]

use std::io::{self, Read};

use cudalint::image::elf::{self, Limits, LIMITS};
use cudalint::image::facts::FileBytes;
use libfuzzer_sys::fuzz_target;

struct Forward<'a> {
    bytes: &'a [u8],
    position: u64,
    random_access: bool,
}

impl Read for Forward<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let start = (self.position as usize).min(self.bytes.len());
        let n = buf.len().min(self.bytes.len() - start);
        buf[..n].copy_from_slice(&self.bytes[start..start + n]);
        self.position += n as u64;
        Ok(n)
    }
}

impl FileBytes for Forward<'_> {
    fn size(&self) -> u64 {
        self.bytes.len() as u64
    }
    fn position(&self) -> u64 {
        self.position
    }
    fn skip_to(&mut self, offset: u64) -> io::Result<()> {
        assert!(offset >= self.position, "backward seek");
        self.position = offset;
        Ok(())
    }
    fn rewind(&mut self) -> io::Result<bool> {
        if self.random_access {
            self.position = 0;
        }
        Ok(self.random_access)
    }
    fn random_access(&self) -> bool {
        self.random_access
    }
}

fuzz_target!(|data: &[u8]| {
    let far = Limits { keep_window: 0, candidate_bytes: 64, ..LIMITS };
    for (limits, random_access) in [(LIMITS, false), (far, false), (LIMITS, true)] {
        let mut file = Forward { bytes: data, position: 0, random_access };
        if let Ok(Some(mut facts)) = elf::read_elf_with(&mut file, &limits) {
            let _ = elf::complete(&mut Forward { bytes: data, position: 0, random_access }, &mut facts);
            for text in facts.needed.iter().chain(&facts.soname) {
                assert!(text.len() <= 4 * LIMITS.max_string);
            }
            for list in [&facts.rpath, &facts.runpath] {
                assert!(list.join(":").len() <= 4 * LIMITS.max_path_list);
            }
        }
    }
});
