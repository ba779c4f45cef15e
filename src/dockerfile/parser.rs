//! BuildKit-grammar Dockerfile parser: the driver.
//!
//! It follows `frontend/dockerfile/parser.Parse` line for line: directives at
//! the top, logical lines joined at the escape character (comments and
//! blank lines inside a continuation dropped), one node per logical line
//! (`node.rs`), heredoc bodies read after the line that announces them. The
//! typed layer (`instructions.rs`) then checks each instruction the way
//! BuildKit's `instructions` package does.
//!
//! Every piece keeps a byte span into the original text; comments are kept
//! so that suppressions can find them.

use crate::dockerfile::ast::{
    Command, Comment, Directive, Dockerfile, Flag, Heredoc, Instruction, ParseError, ParseWarning,
    Word,
};
use crate::dockerfile::directives::{escape_token, DirectiveParser};
use crate::dockerfile::heredoc::{chomp, markers_in_line};
use crate::dockerfile::instructions::type_instruction;
use crate::dockerfile::lines::{trim_continuation, LogicalLine, PhysicalLine, PhysicalLines};
use crate::dockerfile::node::{node_from_line, RawNode};
use crate::source::Span;

/// Parse a Dockerfile's text the way BuildKit does: an error when BuildKit's
/// parser or its instruction checks reject the file. Unknown instructions
/// are kept as [`Command::Unknown`] (BuildKit rejects them only when it
/// converts the tree to a build).
pub fn parse(text: &str) -> Result<Dockerfile, ParseError> {
    let (dockerfile, instruction_errors) = parse_syntax(text)?;
    match instruction_errors.into_iter().next() {
        Some(error) => Err(error),
        None => Ok(dockerfile),
    }
}

/// Parse raw bytes: a UTF-8 byte-order mark is allowed, invalid UTF-8 and
/// NUL bytes (binary files) are located errors.
pub fn parse_bytes(bytes: &[u8]) -> Result<Dockerfile, ParseError> {
    parse(decode(bytes)?)
}

/// [`parse_syntax`] on raw bytes, with [`parse_bytes`]' checks of the
/// encoding: the tolerant entry point for a linter, which reports every
/// instruction error and still checks the rest of the file.
pub fn parse_syntax_bytes(bytes: &[u8]) -> Result<(Dockerfile, Vec<ParseError>), ParseError> {
    parse_syntax(decode(bytes)?)
}

/// The text of a Dockerfile's bytes, or where they stop being text.
fn decode(bytes: &[u8]) -> Result<&str, ParseError> {
    let nul = bytes.iter().position(|&b| b == 0);
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => {
            let bad = error.valid_up_to();
            if nul.is_some_and(|n| n < bad) {
                return Err(binary_error(nul.unwrap_or(bad)));
            }
            let len = error.error_len().unwrap_or(bytes.len() - bad).max(1);
            return Err(ParseError {
                message: format!("invalid UTF-8 at byte {bad}: the Dockerfile must be UTF-8 text"),
                span: Span::new(bad, (bad + len).min(bytes.len())),
            });
        }
    };
    if let Some(at) = nul {
        return Err(binary_error(at));
    }
    Ok(text)
}

fn binary_error(at: usize) -> ParseError {
    ParseError {
        message: format!("binary file: NUL byte at byte {at}; a Dockerfile must be text"),
        span: Span::new(at, at + 1),
    }
}

/// Parse with BuildKit's parser alone: an error only where
/// `parser.Parse` fails. Instructions that BuildKit's `instructions` package
/// would reject are still returned (typed as far as possible), and their
/// errors come back beside the tree, in file order.
pub fn parse_syntax(text: &str) -> Result<(Dockerfile, Vec<ParseError>), ParseError> {
    let mut parser = Parser {
        lines: PhysicalLines::new(text),
        directive_parser: DirectiveParser::default(),
        dockerfile: Dockerfile {
            escape: '\\',
            ..Dockerfile::default()
        },
        instruction_errors: Vec::new(),
        last_end: 0,
    };
    parser.run()?;
    if parser.dockerfile.instructions.is_empty() {
        return Err(ParseError {
            message: "file with no instructions".to_string(),
            span: Span::new(parser.last_end, parser.last_end),
        });
    }
    if let Some(span) = parser.lines.too_long {
        return Err(ParseError {
            message: format!(
                "dockerfile line greater than max allowed size of {}",
                crate::dockerfile::lines::MAX_LINE_BYTES - 1
            ),
            span,
        });
    }
    Ok((parser.dockerfile, parser.instruction_errors))
}

struct Parser<'a> {
    lines: PhysicalLines<'a>,
    directive_parser: DirectiveParser,
    dockerfile: Dockerfile,
    instruction_errors: Vec<ParseError>,
    /// End of the last line read, for errors at end of input.
    last_end: usize,
}

/// A physical line's content with leading whitespace removed, and where
/// that trimmed text starts in the file.
fn trim_leading<'a>(line: &PhysicalLine<'a>) -> (usize, &'a str) {
    let trimmed = line.content.trim_start_matches(char::is_whitespace);
    (line.start + (line.content.len() - trimmed.len()), trimmed)
}

impl<'a> Parser<'a> {
    fn next_line(&mut self) -> Option<PhysicalLine<'a>> {
        let line = self.lines.next()?;
        self.last_end = line.content_end();
        Some(line)
    }

    fn run(&mut self) -> Result<(), ParseError> {
        while let Some(first) = self.next_line() {
            let (start, trimmed) = trim_leading(&first);
            let line_span = Span::new(start, first.content_end());
            match self.directive_parser.parse_line(trimmed) {
                Err(message) => {
                    return Err(ParseError {
                        message,
                        span: line_span,
                    })
                }
                Ok(Some(directive)) => {
                    if directive.name == "escape" {
                        self.dockerfile.escape =
                            escape_token(&directive.value).map_err(|message| ParseError {
                                message,
                                span: line_span,
                            })?;
                    }
                    self.dockerfile.directives.push(Directive {
                        name: directive.name.to_string(),
                        value: directive.value,
                        span: line_span,
                    });
                    continue;
                }
                Ok(None) => {}
            }
            if trimmed.starts_with('#') {
                self.push_comment(&first);
                continue;
            }
            let escape = self.dockerfile.escape;
            let (kept, mut end_of_line) = trim_continuation(trimmed, escape);
            if end_of_line && kept == 0 {
                continue;
            }
            let mut logical = LogicalLine::new(start);
            logical.push(trimmed.get(..kept).unwrap_or_default(), start);
            let mut last = first;
            let mut empty_continuation: Option<Span> = None;
            while !end_of_line {
                let Some(next) = self.next_line() else {
                    break;
                };
                last = next;
                let (lead_end, rest) = trim_leading(&next);
                if rest.starts_with('#') {
                    self.push_comment(&next);
                    continue;
                }
                if rest.is_empty() {
                    empty_continuation.get_or_insert(Span::new(next.start, lead_end));
                    continue;
                }
                let (kept, eol) = trim_continuation(next.content, escape);
                logical.push(next.content.get(..kept).unwrap_or_default(), next.start);
                end_of_line = eol;
            }
            if let Some(span) = empty_continuation {
                self.dockerfile.warnings.push(ParseWarning {
                    message: "empty continuation line (BuildKit: empty continuation lines will \
                              become errors in a future release)"
                        .to_string(),
                    span,
                });
            }
            self.instruction(logical, first, last)?;
        }
        Ok(())
    }

    fn push_comment(&mut self, line: &PhysicalLine<'_>) {
        let (start, trimmed) = trim_leading(line);
        self.dockerfile.comments.push(Comment {
            text: trimmed.get(1..).unwrap_or_default().trim().to_string(),
            span: Span::new(start, line.content_end()),
            line: line.number,
        });
    }

    /// One logical line: its node, its heredocs, its typed command.
    fn instruction(
        &mut self,
        logical: LogicalLine,
        first: PhysicalLine<'a>,
        mut last: PhysicalLine<'a>,
    ) -> Result<(), ParseError> {
        let text_len = logical.text.len();
        let line_start = logical.file_offset(0);
        let escape = self.dockerfile.escape;
        let node = node_from_line(&logical.text, 0, text_len, escape, 0).map_err(|message| {
            ParseError {
                message,
                span: Span::new(line_start, last.content_end()),
            }
        })?;
        let mut heredocs = Vec::new();
        if node.can_contain_heredoc() && logical.text.contains("<<") {
            let markers = markers_in_line(&logical.text).map_err(|message| ParseError {
                message,
                span: Span::new(line_start, last.content_end()),
            })?;
            for marker in markers {
                let mut content = String::new();
                let mut body: Option<Span> = None;
                let mut terminated = false;
                while let Some(line) = self.next_line() {
                    last = line;
                    let candidate = if marker.chomp {
                        line.content.trim_start_matches('\t')
                    } else {
                        line.content
                    };
                    if candidate == marker.name {
                        terminated = true;
                        break;
                    }
                    content.push_str(line.with_ending);
                    let line_span = Span::new(line.start, line.start + line.with_ending.len());
                    body = Some(body.map_or(line_span, |b| b.cover(line_span)));
                }
                if !terminated {
                    return Err(ParseError {
                        message: format!("unterminated heredoc {:?}", marker.name),
                        span: Span::new(line_start, last.content_end()),
                    });
                }
                heredocs.push(Heredoc {
                    content: if marker.chomp {
                        chomp(&content)
                    } else {
                        content
                    },
                    name: marker.name,
                    expand: marker.expand,
                    chomp: marker.chomp,
                    body_span: body.unwrap_or(Span::new(last.start, last.start)),
                });
            }
        }
        let end = last.content_end();
        let shape = Shape {
            logical: &logical,
            end,
            start_line: first.number,
            end_line: last.number,
            escape,
        };
        let instruction = shape.build(&node, &logical.text, heredocs, 0);
        let (command, error) = type_instruction(&instruction, escape);
        if let Some(error) = error {
            self.instruction_errors.push(error);
        }
        self.dockerfile.instructions.push(Instruction {
            command,
            ..instruction
        });
        Ok(())
    }
}

/// What every instruction built from one logical line shares.
struct Shape<'l> {
    logical: &'l LogicalLine,
    end: usize,
    start_line: usize,
    end_line: usize,
    escape: char,
}

impl Shape<'_> {
    fn word(&self, text: String, start: usize, end: usize) -> Word {
        Word {
            text,
            span: self.logical.file_span(start, end),
        }
    }

    /// Layer 1 of an instruction; its command is typed by the caller.
    fn build(
        &self,
        node: &RawNode,
        text: &str,
        heredocs: Vec<Heredoc>,
        depth: usize,
    ) -> Instruction {
        let keyword_span = self.logical.file_span(node.keyword.start, node.keyword.end);
        let start = keyword_span.start.min(self.end);
        let flags = node
            .flags
            .iter()
            .map(|flag| {
                let body = flag.text.strip_prefix("--").unwrap_or(&flag.text);
                let (name, value) = match body.split_once('=') {
                    Some((name, value)) => (name.to_string(), Some(value.to_string())),
                    None => (body.to_string(), None),
                };
                Flag {
                    name,
                    value,
                    span: self.logical.file_span(flag.start, flag.end),
                }
            })
            .collect();
        let args = node
            .flat_args()
            .into_iter()
            .map(|p| self.word(p.text, p.start, p.end))
            .collect();
        let original = match depth {
            0 => text.to_string(),
            _ => text
                .get(node.keyword.start..)
                .unwrap_or_default()
                .to_string(),
        };
        let mut instruction = Instruction {
            keyword: node.keyword.text.to_lowercase(),
            keyword_span,
            span: Span::new(start, self.end),
            start_line: self.start_line,
            end_line: self.end_line,
            flags,
            args,
            json: node.json,
            rest: self.logical.slice(node.rest.0, node.rest.1),
            heredocs: heredocs.clone(),
            original,
            command: Command::Unknown,
        };
        if let Some(child) = &node.child {
            let mut inner = self.build(child, text, heredocs, depth + 1);
            // BuildKit checks a trigger only when a child image runs it; the
            // typed view is best effort.
            inner.command = type_instruction(&inner, self.escape).0;
            instruction.command = Command::Onbuild(Box::new(inner));
        }
        instruction
    }
}
