//! The slice of BuildKit's shell lexer (`frontend/dockerfile/shell`) the
//! parser needs, with no variables set: splitting a line into words to find
//! heredoc markers, and removing quotes and escapes from ENV/LABEL/ARG
//! values while leaving `$VAR` references as written.
//!
//! BuildKit's lexer recurses into `${name:-word}`; here the recursion is
//! capped, and a too-deep word counts as a lexing error.

const MAX_DEPTH: usize = 64;

/// Lexing failed (unterminated quote, bad `${}`…), as BuildKit's lexer
/// reports it; callers decide what that means.
#[derive(Debug, PartialEq, Eq)]
pub struct LexError;

#[derive(Clone, Copy)]
pub struct LexOptions {
    pub escape: char,
    /// Keep quote characters in the output.
    pub raw_quotes: bool,
    /// Keep escape characters in the output.
    pub raw_escapes: bool,
    /// Copy `$…` references verbatim instead of BuildKit's unset-variable
    /// rendering (which rewrites text inside `${…}`).
    pub verbatim_vars: bool,
}

/// BuildKit's `ProcessWords` with an empty environment and `SkipUnsetEnv`.
pub fn process_words(text: &str, options: LexOptions) -> Result<Vec<String>, LexError> {
    let mut lex = Lexer::new(text, options);
    let (_, words) = lex.process_stop_on(None, options.raw_escapes)?;
    Ok(words)
}

/// BuildKit's `ProcessWord` with an empty environment and `SkipUnsetEnv`.
pub fn process_word(text: &str, options: LexOptions) -> Result<String, LexError> {
    let mut lex = Lexer::new(text, options);
    let (word, _) = lex.process_stop_on(None, options.raw_escapes)?;
    Ok(word)
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    options: LexOptions,
    raw_escapes: bool,
    depth: usize,
}

/// BuildKit's `wordsStruct`: splits on unquoted whitespace.
#[derive(Default)]
struct Words {
    buf: String,
    words: Vec<String>,
    in_word: bool,
}

impl Words {
    fn add_char(&mut self, ch: char) {
        if ch.is_whitespace() && self.in_word {
            if !self.buf.is_empty() {
                self.words.push(std::mem::take(&mut self.buf));
                self.in_word = false;
            }
        } else if !ch.is_whitespace() {
            self.add_raw_char(ch);
        }
    }

    fn add_raw_char(&mut self, ch: char) {
        self.buf.push(ch);
        self.in_word = true;
    }

    fn add_string(&mut self, s: &str) {
        for ch in s.chars() {
            self.add_char(ch);
        }
    }

    fn add_raw_string(&mut self, s: &str) {
        self.buf.push_str(s);
        self.in_word = true;
    }

    fn finish(mut self) -> Vec<String> {
        if !self.buf.is_empty() {
            self.words.push(std::mem::take(&mut self.buf));
        }
        self.words
    }
}

impl<'a> Lexer<'a> {
    fn new(src: &'a str, options: LexOptions) -> Self {
        Lexer {
            src,
            pos: 0,
            options,
            raw_escapes: options.raw_escapes,
            depth: 0,
        }
    }

    fn peek(&self) -> Option<char> {
        self.src.get(self.pos..)?.chars().next()
    }

    fn next(&mut self) -> Option<char> {
        let ch = self.peek()?;
        self.pos += ch.len_utf8();
        Some(ch)
    }

    fn process_stop_on(
        &mut self,
        stop: Option<char>,
        raw_escapes: bool,
    ) -> Result<(String, Vec<String>), LexError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(LexError);
        }
        let saved = self.raw_escapes;
        self.raw_escapes = raw_escapes;
        let result = self.stop_on_inner(stop);
        self.raw_escapes = saved;
        self.depth -= 1;
        result
    }

    fn stop_on_inner(&mut self, stop: Option<char>) -> Result<(String, Vec<String>), LexError> {
        let mut result = String::new();
        let mut words = Words::default();
        while let Some(ch) = self.peek() {
            if Some(ch) == stop {
                self.next();
                return Ok((result, words.finish()));
            }
            match ch {
                '$' => {
                    let tmp = self.process_dollar()?;
                    result.push_str(&tmp);
                    words.add_string(&tmp);
                }
                '<' => {
                    let tmp = self.process_possible_heredoc();
                    result.push_str(&tmp);
                    words.add_raw_string(&tmp);
                }
                '\'' => {
                    let tmp = self.process_single_quote()?;
                    result.push_str(&tmp);
                    words.add_raw_string(&tmp);
                }
                '"' => {
                    let tmp = self.process_double_quote()?;
                    result.push_str(&tmp);
                    words.add_raw_string(&tmp);
                }
                _ => {
                    self.next();
                    let mut ch = ch;
                    if ch == self.options.escape {
                        if self.raw_escapes {
                            words.add_raw_char(ch);
                            result.push(ch);
                        }
                        // An escape at the end of the text is dropped.
                        let Some(escaped) = self.next() else {
                            break;
                        };
                        words.add_raw_char(escaped);
                        ch = escaped;
                    } else {
                        words.add_char(ch);
                    }
                    result.push(ch);
                }
            }
        }
        if stop.is_some() {
            return Err(LexError);
        }
        Ok((result, words.finish()))
    }

    fn process_single_quote(&mut self) -> Result<String, LexError> {
        let mut result = String::new();
        if let Some(quote) = self.next() {
            if self.options.raw_quotes {
                result.push(quote);
            }
        }
        loop {
            match self.next() {
                None => return Err(LexError),
                Some('\'') => {
                    if self.options.raw_quotes {
                        result.push('\'');
                    }
                    return Ok(result);
                }
                Some(ch) => result.push(ch),
            }
        }
    }

    fn process_double_quote(&mut self) -> Result<String, LexError> {
        let mut result = String::new();
        if let Some(quote) = self.next() {
            if self.options.raw_quotes {
                result.push(quote);
            }
        }
        loop {
            match self.peek() {
                None => return Err(LexError),
                Some('"') => {
                    self.next();
                    if self.options.raw_quotes {
                        result.push('"');
                    }
                    return Ok(result);
                }
                Some('$') => {
                    let value = self.process_dollar()?;
                    result.push_str(&value);
                }
                Some(_) => {
                    let Some(mut ch) = self.next() else {
                        return Err(LexError);
                    };
                    if ch == self.options.escape {
                        if self.raw_escapes {
                            result.push(ch);
                        }
                        match self.peek() {
                            // BuildKit ignores an escape at the end of a word.
                            None => continue,
                            Some(next)
                                if next == '"' || next == '$' || next == self.options.escape =>
                            {
                                self.next();
                                ch = next;
                            }
                            Some(_) => {}
                        }
                    }
                    result.push(ch);
                }
            }
        }
    }

    fn process_dollar(&mut self) -> Result<String, LexError> {
        let start = self.pos;
        let rendered = self.render_dollar()?;
        if self.options.verbatim_vars {
            return Ok(self
                .src
                .get(start..self.pos)
                .unwrap_or_default()
                .to_string());
        }
        Ok(rendered)
    }

    /// How BuildKit renders a reference to an unset variable.
    fn render_dollar(&mut self) -> Result<String, LexError> {
        self.next();
        if self.peek() != Some('{') {
            let name = self.process_name();
            return Ok(format!("${name}"));
        }
        self.next();
        match self.peek() {
            None | Some('{' | '}' | ':') => return Err(LexError),
            Some(_) => {}
        }
        let name = self.process_name();
        let ch = self.next();
        match ch {
            Some('}') => Ok(format!("${{{name}}}")),
            Some(':') => {
                let modifier = self.next();
                let mut chs = String::from(":");
                // Go renders a missing rune as U+FFFD.
                chs.push(modifier.unwrap_or('\u{fffd}'));
                if matches!(modifier, Some('#' | '%')) {
                    return Err(LexError);
                }
                let (word, _) = self.process_stop_on(Some('}'), false)?;
                Ok(format!("${{{name}{chs}{word}}}"))
            }
            Some(m @ ('+' | '-' | '?' | '#' | '%')) => {
                let raw = m == '#' || m == '%';
                let (word, _) = self.process_stop_on(Some('}'), raw)?;
                Ok(format!("${{{name}{m}{word}}}"))
            }
            Some('/') => {
                if self.peek() == Some('/') {
                    self.next();
                }
                let (pattern, _) = self.process_stop_on(Some('/'), true)?;
                let (replacement, _) = self.process_stop_on(Some('}'), true)?;
                Ok(format!("${{{name}/{pattern}/{replacement}}}"))
            }
            _ => Err(LexError),
        }
    }

    fn process_name(&mut self) -> String {
        let mut name = String::new();
        while let Some(ch) = self.peek() {
            if name.is_empty() && ch.is_ascii_digit() {
                while let Some(d) = self.peek().filter(char::is_ascii_digit) {
                    self.next();
                    name.push(d);
                }
                return name;
            }
            if name.is_empty() && matches!(ch, '@' | '*' | '#' | '?' | '-' | '$' | '!' | '0') {
                self.next();
                name.push(ch);
                return name;
            }
            if !ch.is_alphanumeric() && ch != '_' {
                break;
            }
            self.next();
            name.push(ch);
        }
        name
    }

    fn process_possible_heredoc(&mut self) -> String {
        self.next();
        if self.peek() != Some('<') {
            return "<".to_string();
        }
        self.next();
        let mut result = String::from("<<");
        while let Some(ch) = self.peek().filter(|c| matches!(c, '\t' | '\r' | ' ')) {
            self.next();
            result.push(ch);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RAW: LexOptions = LexOptions {
        escape: '\\',
        raw_quotes: true,
        raw_escapes: true,
        verbatim_vars: false,
    };
    const VALUE: LexOptions = LexOptions {
        escape: '\\',
        raw_quotes: false,
        raw_escapes: false,
        verbatim_vars: true,
    };

    #[test]
    fn raw_words_keep_quotes_and_heredoc_spaces() {
        let words = process_words("RUN <<  EOF  > 'a b' \\x", RAW).unwrap();
        assert_eq!(words, ["RUN", "<<  EOF", ">", "'a b'", "\\x"]);
        assert!(process_words("echo don't", RAW).is_err());
    }

    #[test]
    fn values_lose_quotes_but_keep_variables() {
        assert_eq!(process_word(r#""a b"'c'\d"#, VALUE).unwrap(), "a bcd");
        assert_eq!(
            process_word(r#""${x:-"y"} $HOME""#, VALUE).unwrap(),
            r#"${x:-"y"} $HOME"#
        );
    }

    #[test]
    fn nesting_is_capped() {
        let deep = "${a:-".repeat(1000) + &"}".repeat(1000);
        assert!(process_words(&deep, RAW).is_err());
    }
}
