//! Feeds arbitrary bytes to the fatbin scanner the way the ELF reader's tap does (in pieces of the
//! sizes the first bytes pick, some bytes skipped as the scanner allows) and as one slice. It must
//! never panic, its counts must add up, and both ways must find the same code.
#![no_main]

use cudalint::image::fatbin::{self, Scanner};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let (control, bytes) = data.split_at(2);
    let piece = usize::from(control[0]).max(1);
    let cut = u64::from(control[1]) * 8;
    let size = bytes.len() as u64;
    let ranges = vec![(0, cut.min(size)), (cut, size)];
    let whole = fatbin::scan_bytes(bytes, ranges.clone());
    let mut scanner = Scanner::new(ranges, size);
    let mut position = 0u64;
    while let Some((start, end)) = scanner.wanted(position, size) {
        let end = end.min(start + piece as u64);
        scanner.feed(start, &bytes[start as usize..end as usize]);
        position = end;
    }
    let pieces = scanner.finish();
    assert_eq!(whole, pieces);
    if let Some(code) = whole {
        let entries: u64 = code.rows.iter().map(|row| row.count).sum();
        assert!(entries <= size / 64 + 1);
        let _ = (code.sass(), code.ptx(), code.ptx_isa(), code.compression());
    }
});
