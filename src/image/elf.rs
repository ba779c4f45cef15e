//! Reads the dynamic-linking facts of an ELF file (class, machine, kind, SONAME, DT_NEEDED,
//! DT_RPATH, DT_RUNPATH, PT_INTERP) from a [`FileBytes`] that only goes forwards, without reading the
//! whole file. The record layouts and their parsing come from the `object` crate; this module only
//! decides which byte ranges to keep.
//!
//! # Reading forwards
//!
//! The ELF header names the program headers; they name `PT_INTERP`, `PT_DYNAMIC` and the `PT_LOAD`
//! segments that map addresses to file offsets. The dynamic section names its string table by
//! address (`DT_STRTAB`), and every linker puts that table (`.dynstr`) *before* `.dynamic`, in the
//! first read-only segment. So when the dynamic section is reached, the strings it points at have
//! already streamed past. Two cases:
//!
//! - **Near** (the bytes from the end of the program headers to the end of `.dynamic` fit in
//!   [`Limits::keep_window`], as for nearly every library): keep those bytes and look the strings up.
//! - **Far** (a 1 GiB `libtorch_cuda.so` with a 40 MB `.dynstr`): while the first loaded segment
//!   streams past, keep only the strings that can be a library name or a search path (they contain
//!   `.so`, `/` or `$`, and are no longer than [`Limits::max_path_list`]), within
//!   [`Limits::candidate_bytes`], and likewise in the [`Limits::keep_window`] before `.dynamic`
//!   (where patchelf puts a string table it moved); skip to `.dynamic`; look each referenced
//!   string up among them (a reference may point into the tail of a kept string: linkers merge
//!   suffixes). A string not found that way lies behind the reader: it is recorded in
//!   [`ElfFacts::unread`] with its file offset, and [`complete`] reads exactly those strings in a
//!   second pass over the file. Strings after `.dynamic` are read on the way forwards.
//!
//! Malformed input never panics: every count and size is checked against the file size and the limits
//! before anything is allocated.
//!
//! # How long a string may be
//!
//! A DT_NEEDED or DT_SONAME is one file name, so [`Limits::max_string`] (PATH_MAX) bounds it. A
//! DT_RPATH or DT_RUNPATH is a `:`-separated list of directories that the loader reads whatever its
//! length: Bazel writes one entry per dependency, so TensorFlow 2.21's `libtensorflow_framework.so.2`
//! carries a 20 kB DT_RUNPATH. Lists get their own bound, [`Limits::max_path_list`], and only the last
//! DT_SONAME, DT_RPATH and DT_RUNPATH entry is read (the one glibc's loader keeps), so at most one list
//! of each kind is held.

use std::io::{self, Read};

use object::elf;
use object::read::elf::{FileHeader, ProgramHeader, SectionHeader};
use object::Endianness;

use super::facts::{DynString, ElfClass, ElfFacts, ElfKind, FileBytes};
use super::fatbin::{self, GpuCode, Tap};

mod dynamic;

use dynamic::{checked_len, place, read_dynamic, Strings};

/// How much the reader may keep in memory for one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Keep every byte from the program headers to the end of `.dynamic` when they are at most this many.
    pub keep_window: u64,
    /// Bytes of candidate strings kept while a far string table streams past.
    pub candidate_bytes: usize,
    /// Longest DT_NEEDED or DT_SONAME kept (PATH_MAX): a longer name is no file the loader can open.
    pub max_string: usize,
    /// Longest DT_RPATH or DT_RUNPATH kept: a list of directories, which the loader does not bound.
    pub max_path_list: usize,
}

impl Limits {
    /// The longest string `field` may hold.
    fn max_len(&self, field: DynString) -> usize {
        match field {
            DynString::Needed(_) | DynString::Soname => self.max_string,
            DynString::Rpath | DynString::Runpath => self.max_path_list,
        }
    }
}

/// The limits [`read_elf`] uses: a few MiB at most per file, whatever its size.
pub const LIMITS: Limits = Limits {
    keep_window: 8 * 1024 * 1024,
    candidate_bytes: 4 * 1024 * 1024,
    max_string: 4096,
    max_path_list: 1024 * 1024,
};

/// Program headers beyond this many bytes are no real file (65535 × 56 would be 3.5 MiB).
const MAX_PROGRAM_HEADER_BYTES: u64 = 1024 * 1024;
/// Bounds of the section table and its names, read where the file is random access (GPU code): a
/// larger one is searched by its loaded segments instead.
const MAX_SECTION_HEADER_BYTES: u64 = 4 * 1024 * 1024;
const MAX_SECTION_NAME_BYTES: u64 = 1024 * 1024;
/// Note segments beyond this many bytes are not read for a build ID (one is 36 bytes).
const MAX_NOTE_BYTES: u64 = 64 * 1024;
/// Bytes between two segments that are alignment padding (notes align to 8 at most).
const MAX_PADDING: u64 = 15;
/// A dynamic section beyond this many bytes is no real file (64 Ki entries).
const MAX_DYNAMIC_BYTES: u64 = 1024 * 1024;
/// `e_ident`: the magic, class, data encoding, version and ABI bytes before the typed header fields.
const IDENT_SIZE: usize = 16;
/// Where `e_ident` holds the class.
const CLASS_INDEX: usize = 4;
/// The chunk read at a time while candidate strings stream past.
const SCAN_CHUNK: usize = 64 * 1024;

/// Why a file that starts like an ELF cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ElfError {
    #[error("malformed ELF: {0}")]
    Malformed(String),
    #[error("reading ELF: {0}")]
    Io(#[from] io::Error),
}

fn malformed(what: impl Into<String>) -> ElfError {
    ElfError::Malformed(what.into())
}

/// Reads the facts of `file` with the default [`LIMITS`]; `Ok(None)` when it is no ELF file.
pub fn read_elf(file: &mut dyn FileBytes) -> Result<Option<ElfFacts>, ElfError> {
    read_elf_with(file, &LIMITS)
}

/// Reads the facts of `file` from its current position (which must be 0) with the given limits.
pub fn read_elf_with(
    file: &mut dyn FileBytes,
    limits: &Limits,
) -> Result<Option<ElfFacts>, ElfError> {
    if file.position() != 0 {
        return Err(malformed(
            "the reader must start at the beginning of the file",
        ));
    }
    if file.size() < IDENT_SIZE as u64 {
        return Ok(None);
    }
    let mut ident = [0u8; IDENT_SIZE];
    file.read_exact(&mut ident)?;
    if ident[..4] != elf::ELFMAG {
        return Ok(None);
    }
    let mut reader = Forward {
        file: Tap::new(file),
        limits,
    };
    match ident[CLASS_INDEX] {
        elf::ELFCLASS32 => {
            read_class::<elf::FileHeader32<Endianness>>(&mut reader, &ident, ElfClass::Elf32)
        }
        elf::ELFCLASS64 => {
            read_class::<elf::FileHeader64<Endianness>>(&mut reader, &ident, ElfClass::Elf64)
        }
        other => Err(malformed(format!("unknown ELF class {other}"))),
    }
    .map(Some)
}

/// Reads the strings that the first pass left in [`ElfFacts::unread`], from a fresh pass over the
/// same file (position 0), and puts them in their places.
pub fn complete(file: &mut dyn FileBytes, facts: &mut ElfFacts) -> Result<(), ElfError> {
    let mut unread = std::mem::take(&mut facts.unread);
    unread.sort_by_key(|string| string.offset);
    let mut reader = Forward {
        file: Tap::new(file),
        limits: &LIMITS,
    };
    let mut fetched = Strings::default();
    for string in unread {
        let max = LIMITS.max_len(string.field);
        let text = match fetched.lookup(string.offset) {
            Some(text) => checked_len(text, string.offset, max)?,
            None => {
                let text = reader.string_at(string.offset, max)?;
                fetched.insert(string.offset, text.clone());
                text
            }
        };
        place(facts, string.field, text);
    }
    Ok(())
}

/// The file, read forwards only, with size checks before every allocation; the fatbin scanner sees
/// the bytes of the loaded segments go past (see `fatbin.rs`).
struct Forward<'a> {
    file: Tap<'a>,
    limits: &'a Limits,
}

impl Forward<'_> {
    fn position(&self) -> u64 {
        self.file.position()
    }

    /// `len` bytes at `offset`, which must not lie behind the reader.
    fn bytes_at(&mut self, offset: u64, len: u64) -> Result<Vec<u8>, ElfError> {
        let end = offset
            .checked_add(len)
            .filter(|end| *end <= self.file.size())
            .ok_or_else(|| {
                malformed(format!(
                    "{len} bytes at {offset} lie past the end of the file"
                ))
            })?;
        if offset < self.position() {
            return Err(malformed(format!(
                "bytes at {offset} lie behind bytes already read (at {})",
                self.position()
            )));
        }
        self.file.skip_to(offset)?;
        let mut bytes = vec![0; (end - offset) as usize];
        self.file.read_exact(&mut bytes).map_err(truncated)?;
        Ok(bytes)
    }

    /// `len` bytes at `offset`, going back to the start first where the reader is past it (only for
    /// a random-access file, whose rewind costs nothing).
    fn bytes_at_any(&mut self, offset: u64, len: u64) -> Result<Vec<u8>, ElfError> {
        if offset < self.position() && !self.file.rewind()? {
            return Err(malformed(format!(
                "bytes at {offset} lie behind bytes already read (at {})",
                self.position()
            )));
        }
        self.bytes_at(offset, len)
    }

    /// The NUL-terminated string at `offset`, at most `max` bytes.
    fn string_at(&mut self, offset: u64, max: usize) -> Result<String, ElfError> {
        if offset < self.position() || offset >= self.file.size() {
            return Err(malformed(format!("string at {offset} is out of reach")));
        }
        self.file.skip_to(offset)?;
        let mut text = Vec::new();
        let mut byte = [0u8; 1];
        loop {
            self.file.read_exact(&mut byte).map_err(truncated)?;
            if byte[0] == 0 {
                return Ok(String::from_utf8_lossy(&text).into_owned());
            }
            if text.len() == max {
                return Err(malformed(format!(
                    "string at {offset} is longer than {max} bytes"
                )));
            }
            text.push(byte[0]);
        }
    }
}

fn truncated(error: io::Error) -> ElfError {
    if error.kind() == io::ErrorKind::UnexpectedEof {
        malformed("the file ends before its headers say")
    } else {
        ElfError::Io(error)
    }
}

/// What the program headers say.
struct Segments {
    /// `(vaddr, offset, filesz)` of each PT_LOAD.
    loads: Vec<(u64, u64, u64)>,
    interp: Option<(u64, u64)>,
    dynamic: Option<(u64, u64)>,
    /// `(offset, filesz, align)` of each PT_NOTE.
    notes: Vec<(u64, u64, u64)>,
    /// `[offset, offset + filesz)` of each PT_LOAD: where fatbins are (`.nv_fatbin` in a read-only
    /// or, in older layouts, the executable segment; cuFFT keeps 29,000 more in its writable `.ldata`).
    loaded: Vec<(u64, u64)>,
}

impl Segments {
    fn file_offset(&self, address: u64) -> Option<u64> {
        self.loads.iter().find_map(|&(vaddr, offset, filesz)| {
            let delta = address.checked_sub(vaddr)?;
            (delta < filesz).then(|| offset + delta)
        })
    }

    /// The end of the loaded segment holding the program headers at `position`: where `.dynstr` ends at the latest.
    fn first_segment_end(&self, position: u64) -> Option<u64> {
        self.loads
            .iter()
            .filter(|&&(_, offset, filesz)| {
                offset <= position && position < offset.saturating_add(filesz)
            })
            .map(|&(_, offset, filesz)| offset.saturating_add(filesz))
            .max()
    }
}

fn read_class<Elf: FileHeader<Endian = Endianness>>(
    reader: &mut Forward<'_>,
    ident: &[u8; IDENT_SIZE],
    class: ElfClass,
) -> Result<ElfFacts, ElfError>
where
    Elf::Word: From<u32>,
{
    let header_size = std::mem::size_of::<Elf>();
    let mut header_bytes = ident.to_vec();
    header_bytes.resize(header_size, 0);
    reader
        .file
        .read_exact(&mut header_bytes[IDENT_SIZE..])
        .map_err(truncated)?;
    let header =
        Elf::parse(header_bytes.as_slice()).map_err(|error| malformed(error.to_string()))?;
    let endian = header
        .endian()
        .map_err(|error| malformed(error.to_string()))?;
    let e_type = header.e_type(endian);
    let mut facts = ElfFacts {
        class,
        machine: header.e_machine(endian),
        kind: ElfKind::Other,
        soname: None,
        needed: Vec::new(),
        rpath: Vec::new(),
        runpath: Vec::new(),
        interpreter: None,
        build_id: None,
        unread: Vec::new(),
        gpu_code: None,
    };
    if e_type != elf::ET_EXEC && e_type != elf::ET_DYN {
        return Ok(facts);
    }
    let segments = read_segments::<Elf>(reader, header, endian)?;
    let random_access = reader.file.random_access();
    if !random_access {
        reader.file.watch(segments.loaded.clone());
    }
    read_header_segments::<Elf>(reader, endian, &segments, &mut facts)?;
    let has_interp = segments.interp.is_some();
    if let Some((offset, len)) = segments.dynamic {
        read_dynamic::<Elf>(reader, endian, &segments, offset, len, &mut facts)?;
    }
    // Without a dynamic section, or when PT_INTERP lies after it.
    if let Some((offset, len)) = segments.interp {
        if facts.interpreter.is_none() && offset >= reader.position() {
            facts.interpreter = Some(interpreter(
                reader.bytes_at(offset, len.min(reader.limits.max_string as u64))?,
            ));
        }
    }
    if facts.build_id.is_none() {
        read_notes_ahead::<Elf>(reader, endian, &segments, &mut facts)?;
    }
    facts.kind = match e_type {
        elf::ET_EXEC => ElfKind::Executable,
        // glibc's libc.so.6 has an interpreter too: a SONAME says shared library first.
        _ if has_interp && facts.soname.is_none() => ElfKind::Executable,
        _ => ElfKind::SharedObject,
    };
    facts.gpu_code = if random_access {
        read_gpu_code::<Elf>(reader, header, endian, segments.loaded)?
    } else {
        reader.file.finish().map_err(truncated)?
    };
    Ok(facts)
}

/// The GPU code of a random-access file: the sections that may hold containers, or, where the
/// section table is missing or does not parse, the loaded segments (what a stream's scan searches).
fn read_gpu_code<Elf: FileHeader<Endian = Endianness>>(
    reader: &mut Forward<'_>,
    header: &Elf,
    endian: Endianness,
    loaded: Vec<(u64, u64)>,
) -> Result<Option<GpuCode>, ElfError> {
    let ranges = match container_sections::<Elf>(reader, header, endian) {
        Ok(Some(ranges)) => ranges,
        Ok(None) | Err(ElfError::Malformed(_)) => loaded,
        Err(error) => return Err(error),
    };
    fatbin::scan_file(&mut reader.file, ranges).map_err(truncated)
}

/// `[start, end)` of each loaded, non-executable `SHT_PROGBITS` section that
/// [`fatbin::may_hold_containers`]; `None` when the file has no section table this reader takes.
fn container_sections<Elf: FileHeader<Endian = Endianness>>(
    reader: &mut Forward<'_>,
    header: &Elf,
    endian: Endianness,
) -> Result<Option<Vec<(u64, u64)>>, ElfError> {
    let table_offset: u64 = header.e_shoff(endian).into();
    let count = header.e_shnum(endian);
    let entry_size = usize::from(header.e_shentsize(endian));
    let names_index = usize::from(header.e_shstrndx(endian));
    if table_offset == 0
        || count == 0
        || entry_size != std::mem::size_of::<Elf::SectionHeader>()
        || names_index >= usize::from(count)
    {
        return Ok(None);
    }
    let table_size = entry_size as u64 * u64::from(count);
    if table_size > MAX_SECTION_HEADER_BYTES {
        return Ok(None);
    }
    let bytes = reader.bytes_at_any(table_offset, table_size)?;
    let (sections, _) =
        object::pod::slice_from_bytes::<Elf::SectionHeader>(&bytes, usize::from(count))
            .map_err(|_| malformed("section headers"))?;
    let names_header = &sections[names_index];
    let names_size: u64 = names_header.sh_size(endian).into();
    if names_size > MAX_SECTION_NAME_BYTES {
        return Ok(None);
    }
    let names = reader.bytes_at_any(names_header.sh_offset(endian).into(), names_size)?;
    let name_of = |section: &Elf::SectionHeader| -> &[u8] {
        let start = section.sh_name(endian) as usize;
        let rest = names.get(start..).unwrap_or_default();
        &rest[..rest
            .iter()
            .position(|byte| *byte == 0)
            .unwrap_or(rest.len())]
    };
    let mut ranges = Vec::new();
    for section in sections {
        let flags: u64 = section.sh_flags(endian).into();
        if section.sh_type(endian) != elf::SHT_PROGBITS
            || flags & u64::from(elf::SHF_ALLOC) == 0
            || flags & u64::from(elf::SHF_EXECINSTR) != 0
            || !fatbin::may_hold_containers(name_of(section))
        {
            continue;
        }
        let start: u64 = section.sh_offset(endian).into();
        let size: u64 = section.sh_size(endian).into();
        ranges.push((start, start.saturating_add(size)));
    }
    Ok(Some(ranges))
}

/// The segments that linkers put right after the program headers, PT_INTERP and the notes, read
/// while they follow on from the reader's position (gaps of alignment padding aside), so reading them
/// never skips a byte the dynamic section's strings may need. Sets the interpreter and the GNU build
/// ID (`NT_GNU_BUILD_ID`, lowercase hex: what identifies a build's content). A malformed note is no
/// build ID.
fn read_header_segments<Elf: FileHeader<Endian = Endianness>>(
    reader: &mut Forward<'_>,
    endian: Endianness,
    segments: &Segments,
    facts: &mut ElfFacts,
) -> Result<(), ElfError>
where
    Elf::Word: From<u32>,
{
    let mut chain: Vec<(u64, u64, Option<u64>)> = segments
        .notes
        .iter()
        .map(|&(offset, len, align)| (offset, len, Some(align)))
        .chain(segments.interp.map(|(offset, len)| (offset, len, None)))
        .collect();
    chain.sort_unstable();
    for (offset, len, note_align) in chain {
        let gap = offset.checked_sub(reader.position());
        if gap.is_none_or(|gap| gap > MAX_PADDING) || len > MAX_NOTE_BYTES {
            break;
        }
        let bytes = reader.bytes_at(offset, len)?;
        match note_align {
            None => facts.interpreter = Some(interpreter(bytes)),
            Some(align) => read_build_id::<Elf>(endian, align, &bytes, facts),
        }
    }
    Ok(())
}

/// The note segments from the reader's position on, once the dynamic section is done with, so
/// skipping ahead loses nothing: where `patchelf` moved a note (to the end of the file) when it
/// rewrote a SONAME, as `auditwheel repair` does.
fn read_notes_ahead<Elf: FileHeader<Endian = Endianness>>(
    reader: &mut Forward<'_>,
    endian: Endianness,
    segments: &Segments,
    facts: &mut ElfFacts,
) -> Result<(), ElfError>
where
    Elf::Word: From<u32>,
{
    let mut notes = segments.notes.clone();
    notes.sort_unstable();
    for (offset, len, align) in notes {
        if facts.build_id.is_some() {
            break;
        }
        if offset < reader.position() || len > MAX_NOTE_BYTES {
            continue;
        }
        let bytes = reader.bytes_at(offset, len)?;
        read_build_id::<Elf>(endian, align, &bytes, facts);
    }
    Ok(())
}

/// Sets `facts.build_id` from the GNU build-ID note among `notes` (one note segment's bytes), if any.
fn read_build_id<Elf: FileHeader<Endian = Endianness>>(
    endian: Endianness,
    align: u64,
    notes: &[u8],
    facts: &mut ElfFacts,
) where
    Elf::Word: From<u32>,
{
    // NoteIterator takes 4 or 8; binutils reads anything below 4 as 4.
    let align: u32 = if align == 8 { 8 } else { 4 };
    let Ok(mut notes) = object::read::elf::NoteIterator::<Elf>::new(endian, align.into(), notes)
    else {
        return;
    };
    while let Ok(Some(note)) = notes.next() {
        if facts.build_id.is_none()
            && note.name() == elf::ELF_NOTE_GNU
            && note.n_type(endian) == elf::NT_GNU_BUILD_ID
        {
            facts.build_id = Some(
                note.desc()
                    .iter()
                    .map(|byte| format!("{byte:02x}"))
                    .collect(),
            );
        }
    }
}

fn interpreter(bytes: Vec<u8>) -> String {
    let len = bytes
        .iter()
        .position(|byte| *byte == 0)
        .unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..len]).into_owned()
}

fn read_segments<Elf: FileHeader<Endian = Endianness>>(
    reader: &mut Forward<'_>,
    header: &Elf,
    endian: Endianness,
) -> Result<Segments, ElfError> {
    let mut segments = Segments {
        loads: Vec::new(),
        interp: None,
        dynamic: None,
        notes: Vec::new(),
        loaded: Vec::new(),
    };
    let count = header.e_phnum(endian);
    if count == 0 {
        return Ok(segments);
    }
    if count == elf::PN_XNUM {
        return Err(malformed("more program headers than e_phnum can count"));
    }
    let entry_size = usize::from(header.e_phentsize(endian));
    if entry_size != std::mem::size_of::<Elf::ProgramHeader>() {
        return Err(malformed(format!("program header size {entry_size}")));
    }
    let table_size = entry_size as u64 * u64::from(count);
    if table_size > MAX_PROGRAM_HEADER_BYTES {
        return Err(malformed("program header table too large"));
    }
    let bytes = reader.bytes_at(header.e_phoff(endian).into(), table_size)?;
    let (headers, _) =
        object::pod::slice_from_bytes::<Elf::ProgramHeader>(&bytes, usize::from(count))
            .map_err(|_| malformed("program headers"))?;
    for program_header in headers {
        let offset: u64 = program_header.p_offset(endian).into();
        let filesz: u64 = program_header.p_filesz(endian).into();
        match program_header.p_type(endian) {
            elf::PT_LOAD => {
                segments
                    .loads
                    .push((program_header.p_vaddr(endian).into(), offset, filesz));
                segments
                    .loaded
                    .push((offset, offset.saturating_add(filesz)));
            }
            elf::PT_INTERP => segments.interp = Some((offset, filesz)),
            elf::PT_DYNAMIC => segments.dynamic = Some((offset, filesz)),
            elf::PT_NOTE => {
                segments
                    .notes
                    .push((offset, filesz, program_header.p_align(endian).into()))
            }
            _ => {}
        }
    }
    Ok(segments)
}
