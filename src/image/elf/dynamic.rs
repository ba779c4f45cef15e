//! The dynamic section and its strings: where DT_NEEDED, DT_SONAME, DT_RPATH and DT_RUNPATH point,
//! and how their strings are found while the file goes past forwards (kept bytes in the near case,
//! candidate strings in the far case; see the parent module's "Reading forwards").

use std::collections::BTreeMap;
use std::io::Read;

use object::elf;
use object::read::elf::{Dyn, FileHeader};
use object::Endianness;

use super::{
    interpreter, malformed, read_build_id, truncated, ElfError, Forward, Segments,
    MAX_DYNAMIC_BYTES, MAX_NOTE_BYTES, SCAN_CHUNK,
};
use crate::image::facts::{DynString, ElfFacts, FileBytes, UnreadString};

pub(super) fn place(facts: &mut ElfFacts, field: DynString, text: String) {
    match field {
        DynString::Needed(index) => {
            if let Some(slot) = facts.needed.get_mut(index) {
                *slot = text;
            }
        }
        DynString::Soname => facts.soname = Some(text),
        DynString::Rpath => facts.rpath = split_path_list(&text),
        DynString::Runpath => facts.runpath = split_path_list(&text),
    }
}

/// DT_RPATH and DT_RUNPATH are `:`-separated lists of directories.
fn split_path_list(list: &str) -> Vec<String> {
    list.split(':').map(str::to_owned).collect()
}

impl Forward<'_> {
    /// Streams `[position, end)` past, keeping the strings that can be a library name or a search path.
    /// Only the strings around a mark such a string must hold (`/`, `$`, `.so`, found with memchr's
    /// vector search) are looked at: most of a first segment is symbols and code, passed over.
    fn scan_candidates(&mut self, end: u64, strings: &mut Strings) -> Result<(), ElfError> {
        let longest = self.limits.max_string.max(self.limits.max_path_list);
        // The bytes read and not yet looked at: the string the last chunk ended in (from its last
        // NUL, so a string across two chunks is seen whole), then the new chunk.
        let mut window: Vec<u8> = Vec::with_capacity(SCAN_CHUNK);
        let mut window_start = self.position();
        // Whether the window starts inside a string already too long to keep.
        let mut starts_too_long = false;
        while self.position() < end {
            let want = SCAN_CHUNK.min((end - self.position()) as usize);
            let kept = window.len();
            window.resize(kept + want, 0);
            self.file
                .read_exact(&mut window[kept..])
                .map_err(truncated)?;
            if let Some(last_nul) = memchr::memrchr(0, &window) {
                for (start, len) in marked_strings(&window[..=last_nul]) {
                    if (start == 0 && starts_too_long) || len > longest {
                        continue;
                    }
                    let text = &window[start..start + len];
                    if may_be_dynamic_string(text)
                        && strings.bytes + text.len() <= self.limits.candidate_bytes
                    {
                        strings.insert(
                            window_start + start as u64,
                            String::from_utf8_lossy(text).into_owned(),
                        );
                    }
                }
                window.drain(..=last_nul);
                window_start += last_nul as u64 + 1;
                starts_too_long = false;
            }
            if window.len() > longest {
                window_start += window.len() as u64;
                window.clear();
                starts_too_long = true;
            }
        }
        Ok(())
    }
}

/// The NUL-terminated strings of `bytes` (which ends in a NUL) that hold a `/`, a `$` or `.so`, as
/// (start, length), in order.
fn marked_strings(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut marks: Vec<usize> = memchr::memchr2_iter(b'/', b'$', bytes).collect();
    marks.extend(memchr::memmem::find_iter(bytes, b".so"));
    marks.sort_unstable();
    let mut spans = Vec::new();
    // Where the last string found ended (its NUL): marks before it are inside it.
    let mut searched_to = 0;
    for mark in marks {
        if mark < searched_to {
            continue;
        }
        let start = memchr::memrchr(0, &bytes[searched_to..mark])
            .map_or(searched_to, |nul| searched_to + nul + 1);
        let Some(len) = memchr::memchr(0, &bytes[start..]) else {
            break;
        };
        spans.push((start, len));
        searched_to = start + len + 1;
    }
    spans
}

/// `text` (the string at `offset`) when it is at most `max` bytes: a kept string may be longer than
/// the field it is looked up for allows (a path list's tail taken as a name).
pub(super) fn checked_len(text: String, offset: u64, max: usize) -> Result<String, ElfError> {
    if text.len() > max {
        return Err(malformed(format!(
            "string at {offset} is longer than {max} bytes"
        )));
    }
    Ok(text)
}

/// Whether a string of the first segment can be a DT_NEEDED, DT_SONAME, DT_RPATH or DT_RUNPATH.
fn may_be_dynamic_string(text: &[u8]) -> bool {
    !text.is_empty()
        && text
            .iter()
            .all(|byte| byte.is_ascii_graphic() || *byte == b' ')
        && (text.windows(3).any(|window| window == b".so")
            || text.contains(&b'/')
            || text[0] == b'$')
}

/// Strings kept by file offset; a lookup may land inside one (a merged suffix).
#[derive(Default)]
pub(super) struct Strings {
    by_offset: BTreeMap<u64, String>,
    bytes: usize,
}

impl Strings {
    pub(super) fn insert(&mut self, offset: u64, text: String) {
        self.bytes += text.len();
        self.by_offset.insert(offset, text);
    }

    pub(super) fn lookup(&self, offset: u64) -> Option<String> {
        let (start, text) = self.by_offset.range(..=offset).next_back()?;
        let skip = usize::try_from(offset - start).ok()?;
        text.get(skip..)
            .map(str::to_owned)
            .filter(|_| skip <= text.len())
    }
}

/// The bytes kept from `start` on (the near case).
struct Kept {
    start: u64,
    bytes: Vec<u8>,
}

impl Kept {
    fn string_at(&self, offset: u64, max: usize) -> Option<Result<String, ElfError>> {
        let from = usize::try_from(offset.checked_sub(self.start)?).ok()?;
        let rest = self.bytes.get(from..)?;
        Some(
            match rest.iter().take(max + 1).position(|byte| *byte == 0) {
                Some(len) => Ok(String::from_utf8_lossy(&rest[..len]).into_owned()),
                None => Err(malformed(format!(
                    "string at {offset} is unterminated or too long"
                ))),
            },
        )
    }
}

/// One string reference of the dynamic section.
struct Reference {
    field: DynString,
    /// Offset into the string table.
    index: u64,
}

pub(super) fn read_dynamic<Elf: FileHeader<Endian = Endianness>>(
    reader: &mut Forward<'_>,
    endian: Endianness,
    segments: &Segments,
    offset: u64,
    len: u64,
    facts: &mut ElfFacts,
) -> Result<(), ElfError>
where
    Elf::Word: From<u32>,
{
    if len > MAX_DYNAMIC_BYTES {
        return Err(malformed("dynamic section too large"));
    }
    let end = offset
        .checked_add(len)
        .filter(|end| *end <= reader.file.size())
        .ok_or_else(|| malformed("dynamic section lies past the end of the file"))?;
    if offset < reader.position() {
        return Err(malformed("dynamic section overlaps the program headers"));
    }
    let start = reader.position();
    let mut candidates = Strings::default();
    let interp = segments
        .interp
        .filter(|&(interp, len)| interp >= start && interp.saturating_add(len) <= offset)
        .map(|(interp, len)| (interp, len.min(reader.limits.max_string as u64)));
    let (kept, dynamic_bytes) = if end - start <= reader.limits.keep_window {
        let bytes = reader.bytes_at(start, end - start)?;
        if let Some((interp, len)) = interp {
            let from = (interp - start) as usize;
            facts.interpreter = Some(interpreter(bytes[from..from + len as usize].to_vec()));
        }
        let dynamic = bytes[(offset - start) as usize..].to_vec();
        (Some(Kept { start, bytes }), dynamic)
    } else {
        let scan_end = segments
            .first_segment_end(start)
            .unwrap_or(start)
            .min(offset);
        match interp {
            Some((interp, len)) if interp < scan_end => {
                reader.scan_candidates(interp, &mut candidates)?;
                facts.interpreter = Some(interpreter(reader.bytes_at(interp, len)?));
                reader.scan_candidates(scan_end.max(reader.position()), &mut candidates)?;
            }
            Some((interp, len)) => {
                reader.scan_candidates(scan_end, &mut candidates)?;
                facts.interpreter = Some(interpreter(reader.bytes_at(interp, len)?));
            }
            None => reader.scan_candidates(scan_end, &mut candidates)?,
        }
        // patchelf, which manylinux wheels pass through (auditwheel, NVIDIA's own), moves a string
        // table it grew to the end of the file, right before `.dynamic` (PyPI's libcusparseLt.so.0:
        // 1.2 kB before it, 231 MB after the first segment). In a stream those bytes go past anyway:
        // scan them too, or each such library costs a second pass over its layer (a second download
        // from a registry). A file on disk goes back for the few strings instead.
        let tail = offset
            .saturating_sub(reader.limits.keep_window)
            .max(reader.position());
        if tail < offset && !reader.file.random_access() {
            reader.file.skip_to(tail)?;
            // patchelf moves the build-ID note along, just before the strings: read it on the way.
            let mut notes: Vec<(u64, u64, u64)> = segments
                .notes
                .iter()
                .copied()
                .filter(|&(note, note_len, _)| {
                    note >= tail
                        && note_len <= MAX_NOTE_BYTES
                        && note.saturating_add(note_len) <= offset
                })
                .collect();
            notes.sort_unstable();
            for (note, note_len, align) in notes {
                if facts.build_id.is_some() || note < reader.position() {
                    continue;
                }
                reader.scan_candidates(note, &mut candidates)?;
                let bytes = reader.bytes_at(note, note_len)?;
                read_build_id::<Elf>(endian, align, &bytes, facts);
            }
            reader.scan_candidates(offset, &mut candidates)?;
        }
        (None, reader.bytes_at(offset, len)?)
    };
    let entry_count = dynamic_bytes.len() / std::mem::size_of::<Elf::Dyn>();
    let (entries, _) = object::pod::slice_from_bytes::<Elf::Dyn>(&dynamic_bytes, entry_count)
        .map_err(|_| malformed("dynamic section"))?;
    let mut references = Vec::new();
    let mut string_table = None;
    let mut string_table_size = None;
    for entry in entries {
        let value = entry.val(endian);
        let field = match entry.tag(endian) {
            elf::DT_NULL => break,
            elf::DT_STRTAB => {
                string_table = Some(value);
                continue;
            }
            elf::DT_STRSZ => {
                string_table_size = Some(value);
                continue;
            }
            elf::DT_NEEDED => {
                facts.needed.push(String::new());
                DynString::Needed(facts.needed.len() - 1)
            }
            elf::DT_SONAME => DynString::Soname,
            elf::DT_RPATH => DynString::Rpath,
            elf::DT_RUNPATH => DynString::Runpath,
            _ => continue,
        };
        references.push(Reference {
            field,
            index: value,
        });
    }
    if references.is_empty() {
        return Ok(());
    }
    // glibc's loader keeps the last entry of a tag (elf_get_dynamic_info): only that string is read.
    let last = |field: DynString| {
        references
            .iter()
            .rposition(|reference| reference.field == field)
    };
    let singles = [
        last(DynString::Soname),
        last(DynString::Rpath),
        last(DynString::Runpath),
    ];
    let references = references
        .into_iter()
        .enumerate()
        .filter(|(at, reference)| {
            matches!(reference.field, DynString::Needed(_)) || singles.contains(&Some(*at))
        })
        .map(|(_, reference)| reference);
    let table_address =
        string_table.ok_or_else(|| malformed("dynamic strings without DT_STRTAB"))?;
    let table_offset = segments
        .file_offset(table_address)
        .ok_or_else(|| malformed("DT_STRTAB lies outside every loaded segment"))?;
    let mut ahead = Vec::new();
    for reference in references {
        if string_table_size.is_some_and(|size| reference.index >= size) {
            return Err(malformed("a dynamic string lies past DT_STRSZ"));
        }
        let file_offset = table_offset
            .checked_add(reference.index)
            .ok_or_else(|| malformed("dynamic string offset overflows"))?;
        let max = reader.limits.max_len(reference.field);
        let found = match kept
            .as_ref()
            .and_then(|kept| kept.string_at(file_offset, max))
        {
            Some(text) => Some(text?),
            None => candidates
                .lookup(file_offset)
                .map(|text| checked_len(text, file_offset, max))
                .transpose()?,
        };
        match found {
            Some(text) => place(facts, reference.field, text),
            None if file_offset >= reader.position() => ahead.push((file_offset, reference.field)),
            None => facts.unread.push(UnreadString {
                field: reference.field,
                offset: file_offset,
            }),
        }
    }
    ahead.sort_by_key(|(file_offset, _)| *file_offset);
    let mut fetched = Strings::default();
    for (file_offset, field) in ahead {
        let max = reader.limits.max_len(field);
        let text = match fetched.lookup(file_offset) {
            Some(text) => checked_len(text, file_offset, max)?,
            None => {
                let text = reader.string_at(file_offset, max)?;
                fetched.insert(file_offset, text.clone());
                text
            }
        };
        place(facts, field, text);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marked_strings_are_the_whole_strings_around_each_mark() {
        let bytes = b"\x01\x02\0libc.so.6\0printf\0$ORIGIN/../lib\0a/b/c/d\0x.so\0";
        let found: Vec<&[u8]> = marked_strings(bytes)
            .into_iter()
            .map(|(start, len)| &bytes[start..start + len])
            .collect();
        let expected: Vec<&[u8]> = vec![b"libc.so.6", b"$ORIGIN/../lib", b"a/b/c/d", b"x.so"];
        assert_eq!(found, expected);
    }

    #[test]
    fn a_mark_at_the_very_start_or_in_binary_bytes_is_found_once() {
        let bytes = b"/usr/lib\0\x24\x2f\x90\0";
        assert_eq!(marked_strings(bytes), vec![(0, 8), (9, 3)]);
    }
}
