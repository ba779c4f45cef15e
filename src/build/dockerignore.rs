//! `.dockerignore` with Docker's own semantics, which are not gitignore's: the file is read the way
//! `moby/patternmatcher/ignorefile.ReadAll` reads it, and paths are matched the way
//! `moby/patternmatcher` (the matcher the Docker CLI and `moby/go-archive` use to build the context
//! tar) matches them. Written from that Go code (moby/patternmatcher@5a6d842: `patternmatcher.go`,
//! `ignorefile/ignorefile.go`); the tests at the bottom are its own tests' cases.
//!
//! In short: each line is a pattern, cleaned like a path (`./a//b/` is `a/b`, a leading `/` dropped);
//! `*` and `?` never cross a `/`, `**` crosses any number of them; `!` re-includes what an earlier
//! pattern excluded, and the last pattern that matches decides; a pattern that matches a directory
//! excludes everything under it. Patterns are matched against the whole slash-separated path from
//! the context root, so `foo` means only `./foo`, never `sub/foo`.
//!
//! Docker turns each pattern into a Go regular expression. Where that translation differs from the
//! glob it claims to be (a `*` or `?` inside `[...]`, a `^` outside one, Go class names such as
//! `[[:alpha:]]` or `\d`), this matcher follows the glob: the behaviour a `.dockerignore` author can
//! read in Docker's documentation. A class range written backwards (`[z-a]`), which Docker rejects
//! only when it first matches a path, is rejected here when the file is read.

use std::fmt;

/// A pattern Docker would refuse (`filepath.ErrBadPattern`, or a lone `!`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad .dockerignore pattern `{pattern}`: {reason}")]
pub struct PatternError {
    pub pattern: String,
    pub reason: &'static str,
}

/// The patterns of a `.dockerignore` file, in order (`ignorefile.ReadAll`): a UTF-8 byte-order mark
/// is dropped, a line that *starts* with `#` is a comment (an indented `#` is a pattern), blank
/// lines are skipped, and each pattern is trimmed and cleaned like a path with its leading `/`
/// removed, `!` kept in front.
pub fn read_patterns(text: &str) -> Vec<String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut patterns = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') {
            continue;
        }
        let mut pattern = line.trim();
        if pattern.is_empty() {
            continue;
        }
        let invert = pattern.starts_with('!');
        if invert {
            pattern = pattern[1..].trim();
        }
        let mut cleaned = String::new();
        if !pattern.is_empty() {
            cleaned = clean_path(pattern);
            if cleaned.len() > 1 && cleaned.starts_with('/') {
                cleaned.remove(0);
            }
        }
        patterns.push(if invert {
            format!("!{cleaned}")
        } else {
            cleaned
        });
    }
    patterns
}

/// Go's `path.Clean` for slash paths: repeated slashes collapsed, `.` elements dropped, `..`
/// resolved against the element before it (kept at the start of a relative path, dropped at the
/// root), no trailing slash; the empty path is `.`.
pub fn clean_path(path: &str) -> String {
    let rooted = path.starts_with('/');
    let mut elements: Vec<&str> = Vec::new();
    for element in path.split('/') {
        match element {
            "" | "." => {}
            ".." => match elements.last() {
                Some(&last) if last != ".." => {
                    elements.pop();
                }
                _ if rooted => {}
                _ => elements.push(".."),
            },
            _ => elements.push(element),
        }
    }
    let joined = elements.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    }
}

/// The ordered patterns of one `.dockerignore`, ready to match context paths.
#[derive(Debug, Clone)]
pub struct PatternMatcher {
    patterns: Vec<Pattern>,
    exclusions: bool,
}

/// Which patterns matched a directory, so that its entries need not test the patterns again
/// (patternmatcher's `MatchInfo`). Empty means "not known": the entry's parents are then tested.
#[derive(Debug, Clone, Default)]
pub struct MatchInfo {
    parent_matched: Vec<bool>,
}

/// One pattern: its cleaned text (without `!`), whether it re-includes, and how it matches.
#[derive(Debug, Clone)]
pub struct Pattern {
    text: String,
    exclusion: bool,
    /// How many path elements the pattern has (`a/*/c` has 3); the old single-parent matcher
    /// tests the path's first that many elements.
    elements: usize,
    kind: MatchKind,
}

/// patternmatcher's match types: the common shapes are compared as strings, the rest run as a glob.
#[derive(Debug, Clone, PartialEq, Eq)]
enum MatchKind {
    /// No wildcard: the path equals the pattern.
    Exact,
    /// `literal**`: the path starts with the literal (`dir/**` matches `dir/x/y`, not `dir`).
    Prefix(String),
    /// `**literal`: the path ends with the literal, or is it without its leading `/`.
    Suffix(String),
    Glob(Vec<Token>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Literal(char),
    /// `?`: one character other than `/`.
    AnyChar,
    /// `*`: any run of characters without `/`.
    Star,
    /// `**/` (or `**` inside a pattern): nothing, or any run ending with `/` (`(.*/)?`).
    AnyDirs,
    /// `**` at the end of a pattern that is not a plain prefix: anything (`.*`).
    AnyTail,
    Class(CharClass),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct CharClass {
    negated: bool,
    ranges: Vec<(char, char)>,
}

impl CharClass {
    fn contains(&self, c: char) -> bool {
        self.ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != self.negated
    }
}

impl Pattern {
    /// The pattern as cleaned, without its `!`.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the pattern re-includes (`!pattern`).
    pub fn is_exclusion(&self) -> bool {
        self.exclusion
    }

    fn matches(&self, path: &str) -> bool {
        match &self.kind {
            MatchKind::Exact => path == self.text,
            MatchKind::Prefix(prefix) => path.starts_with(prefix.as_str()),
            MatchKind::Suffix(suffix) => {
                path.ends_with(suffix.as_str())
                    // `**/foo` matches `foo`.
                    || suffix.strip_prefix('/') == Some(path)
            }
            MatchKind::Glob(tokens) => glob_matches(tokens, path),
        }
    }
}

impl PatternMatcher {
    /// Compile `patterns` as `patternmatcher.New` does: each is trimmed, skipped when empty, cleaned
    /// like a path, its `!` taken off, and checked for glob syntax.
    pub fn new<Line: AsRef<str>>(patterns: &[Line]) -> Result<PatternMatcher, PatternError> {
        let mut compiled = Vec::with_capacity(patterns.len());
        let mut exclusions = false;
        for original in patterns {
            let trimmed = original.as_ref().trim();
            if trimmed.is_empty() {
                continue;
            }
            let cleaned = clean_path(trimmed);
            let (exclusion, text) = match cleaned.strip_prefix('!') {
                Some("") => {
                    return Err(PatternError {
                        pattern: original.as_ref().to_string(),
                        reason: "a lone `!` excludes nothing",
                    })
                }
                Some(rest) => (true, rest.to_string()),
                None => (false, cleaned),
            };
            exclusions |= exclusion;
            let kind = compile(&text).map_err(|reason| PatternError {
                pattern: original.as_ref().to_string(),
                reason,
            })?;
            compiled.push(Pattern {
                elements: text.split('/').count(),
                text,
                exclusion,
                kind,
            });
        }
        Ok(PatternMatcher {
            patterns: compiled,
            exclusions,
        })
    }

    /// Whether any pattern re-includes (`!`): only then may an excluded directory hold entries
    /// that are sent.
    pub fn has_exclusions(&self) -> bool {
        self.exclusions
    }

    pub fn patterns(&self) -> &[Pattern] {
        &self.patterns
    }

    /// Whether `path` (slash-separated, relative to the context root) is excluded: some pattern
    /// matches it or one of its parent directories, and no later `!` pattern re-includes it
    /// (`MatchesOrParentMatches`).
    pub fn matches_or_parent_matches(&self, path: &str) -> bool {
        let parents = parent_prefixes(path);
        let mut matched = false;
        for pattern in &self.patterns {
            // An inclusion need not be tested once the path is excluded, nor an exclusion
            // before it is.
            if pattern.exclusion != matched {
                continue;
            }
            let hit = pattern.matches(path) || parents.iter().any(|parent| pattern.matches(parent));
            if hit {
                matched = !pattern.exclusion;
            }
        }
        matched
    }

    /// [`matches_or_parent_matches`](Self::matches_or_parent_matches) for a walk that goes from
    /// each directory to its entries: `parent` is what the directory's own call returned (empty for
    /// the context root's entries), and the returned [`MatchInfo`] is for this path's entries
    /// (`MatchesUsingParentResults`, what the context tar is built with).
    pub fn matches_using_parent_results(
        &self,
        path: &str,
        parent: &MatchInfo,
    ) -> (bool, MatchInfo) {
        let known = parent.parent_matched.len() == self.patterns.len();
        let mut info = MatchInfo {
            parent_matched: vec![false; self.patterns.len()],
        };
        let mut matched = false;
        for (index, pattern) in self.patterns.iter().enumerate() {
            let mut hit = known && parent.parent_matched[index];
            if !hit {
                if pattern.exclusion != matched {
                    continue;
                }
                hit = pattern.matches(path)
                    || (!known
                        && parent_prefixes(path)
                            .iter()
                            .any(|prefix| pattern.matches(prefix)));
            }
            info.parent_matched[index] = hit;
            if hit {
                matched = !pattern.exclusion;
            }
        }
        (matched, info)
    }

    /// The deprecated `patternmatcher.Matches`, which tests only the parent directory with as many
    /// elements as the pattern has. The Docker CLI still uses it for one decision: whether the
    /// Dockerfile and `.dockerignore` are excluded, so that `!` patterns can keep them in the
    /// context (`TrimBuildFilesFromExcludes`). The context root itself is never excluded.
    pub fn matches_single_parent(&self, path: &str) -> bool {
        let path = clean_path(path);
        if path == "." {
            return false;
        }
        let parent_elements: Vec<&str> = match path.rsplit_once('/') {
            Some((parent, _)) => parent.split('/').collect(),
            None => Vec::new(),
        };
        let mut matched = false;
        for pattern in &self.patterns {
            if pattern.exclusion != matched {
                continue;
            }
            let mut hit = pattern.matches(&path);
            if !hit && !parent_elements.is_empty() && pattern.elements <= parent_elements.len() {
                hit = pattern.matches(&parent_elements[..pattern.elements].join("/"));
            }
            if hit {
                matched = !pattern.exclusion;
            }
        }
        matched
    }
}

/// `a`, `a/b` for `a/b/c`: every parent directory of a relative path.
fn parent_prefixes(path: &str) -> Vec<&str> {
    path.match_indices('/')
        .map(|(index, _)| &path[..index])
        .filter(|prefix| !prefix.is_empty())
        .collect()
}

/// Turn a cleaned pattern into its match type, following patternmatcher's `compile` (which picks
/// the type while it writes the regular expression): no wildcard is an exact match, a leading `**`
/// followed only by literals a suffix match, literals followed by a final `**` a prefix match.
fn compile(pattern: &str) -> Result<MatchKind, &'static str> {
    #[derive(PartialEq)]
    enum Detected {
        Exact,
        Prefix,
        Suffix,
        Glob,
    }
    let chars: Vec<char> = pattern.chars().collect();
    let mut detected = Detected::Exact;
    let mut tokens = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        let first = at == 0;
        let c = chars[at];
        at += 1;
        match c {
            '*' if chars.get(at) == Some(&'*') => {
                at += 1;
                // `**/` is `**`.
                if chars.get(at) == Some(&'/') {
                    at += 1;
                }
                if at == chars.len() {
                    if detected == Detected::Exact {
                        detected = Detected::Prefix;
                    } else {
                        tokens.push(Token::AnyTail);
                        detected = Detected::Glob;
                    }
                } else {
                    tokens.push(Token::AnyDirs);
                    detected = Detected::Glob;
                }
                if first {
                    detected = Detected::Suffix;
                }
            }
            '*' => {
                tokens.push(Token::Star);
                detected = Detected::Glob;
            }
            '?' => {
                tokens.push(Token::AnyChar);
                detected = Detected::Glob;
            }
            '\\' => {
                let escaped = *chars.get(at).ok_or("it ends with an unescaped `\\`")?;
                at += 1;
                tokens.push(Token::Literal(escaped));
                detected = Detected::Glob;
            }
            '[' => {
                let (class, next) = parse_class(&chars, at)?;
                at = next;
                tokens.push(Token::Class(class));
                detected = Detected::Glob;
            }
            _ => tokens.push(Token::Literal(c)),
        }
    }
    Ok(match detected {
        Detected::Exact => MatchKind::Exact,
        Detected::Prefix => MatchKind::Prefix(pattern[..pattern.len() - 2].to_string()),
        Detected::Suffix => MatchKind::Suffix(pattern[2..].to_string()),
        Detected::Glob => MatchKind::Glob(tokens),
    })
}

/// A `[...]` class whose `[` is just before `at`, with Go's `filepath.Match` syntax: `^` negates,
/// `lo-hi` ranges, `\` escapes; `-` or `]` cannot start a range and the class cannot be empty.
/// Returns the class and the index after its `]`.
fn parse_class(chars: &[char], mut at: usize) -> Result<(CharClass, usize), &'static str> {
    const UNCLOSED: &str = "a `[` class is not closed";
    let negated = chars.get(at) == Some(&'^');
    if negated {
        at += 1;
    }
    let mut ranges = Vec::new();
    let class_char = |at: &mut usize| -> Result<char, &'static str> {
        match chars.get(*at) {
            None => Err(UNCLOSED),
            Some('-' | ']') => Err("a class has a `-` or `]` where a character should be"),
            Some('\\') => {
                let escaped = *chars.get(*at + 1).ok_or(UNCLOSED)?;
                *at += 2;
                Ok(escaped)
            }
            Some(&c) => {
                *at += 1;
                Ok(c)
            }
        }
    };
    loop {
        if chars.get(at) == Some(&']') && !ranges.is_empty() {
            return Ok((CharClass { negated, ranges }, at + 1));
        }
        let lo = class_char(&mut at)?;
        let hi = if chars.get(at) == Some(&'-') {
            at += 1;
            class_char(&mut at)?
        } else {
            lo
        };
        if hi < lo {
            return Err("a class range runs backwards");
        }
        ranges.push((lo, hi));
    }
}

/// Whether the glob `tokens` match all of `path`.
fn glob_matches(tokens: &[Token], path: &str) -> bool {
    let text: Vec<char> = path.chars().collect();
    let mut memo = vec![None; (tokens.len() + 1) * (text.len() + 1)];
    glob_from(tokens, &text, 0, 0, &mut memo)
}

/// Whether `tokens[token..]` match `text[at..]`; memoised, so a pattern with many `*` stays
/// linear in the path per token.
fn glob_from(
    tokens: &[Token],
    text: &[char],
    token: usize,
    at: usize,
    memo: &mut [Option<bool>],
) -> bool {
    let key = token * (text.len() + 1) + at;
    if let Some(known) = memo[key] {
        return known;
    }
    let rest = &text[at..];
    let result = match tokens.get(token) {
        None => rest.is_empty(),
        Some(Token::Literal(c)) => {
            rest.first() == Some(c) && glob_from(tokens, text, token + 1, at + 1, memo)
        }
        Some(Token::AnyChar) => {
            rest.first().is_some_and(|&c| c != '/')
                && glob_from(tokens, text, token + 1, at + 1, memo)
        }
        Some(Token::Class(class)) => {
            rest.first().is_some_and(|&c| class.contains(c))
                && glob_from(tokens, text, token + 1, at + 1, memo)
        }
        // Go's `.` does not match a newline; `[^/]` does.
        Some(Token::Star) => run_then(tokens, text, token, at, |c| c != '/', |_| true, memo),
        Some(Token::AnyTail) => run_then(tokens, text, token, at, |c| c != '\n', |_| true, memo),
        Some(Token::AnyDirs) => run_then(
            tokens,
            text,
            token,
            at,
            |c| c != '\n',
            |end| end == at || text[end - 1] == '/',
            memo,
        ),
    };
    memo[key] = Some(result);
    result
}

/// A run of characters that all satisfy `allowed`, ending where `may_end` allows, followed by a
/// match of the tokens after `token`.
fn run_then(
    tokens: &[Token],
    text: &[char],
    token: usize,
    at: usize,
    allowed: impl Fn(char) -> bool,
    may_end: impl Fn(usize) -> bool,
    memo: &mut [Option<bool>],
) -> bool {
    let mut end = at;
    loop {
        if may_end(end) && glob_from(tokens, text, token + 1, end, memo) {
            return true;
        }
        match text.get(end) {
            Some(&c) if allowed(c) => end += 1,
            _ => return false,
        }
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.exclusion {
            f.write_str("!")?;
        }
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    //! Cases from moby/patternmatcher's own tests (`patternmatcher_test.go`,
    //! `ignorefile/ignorefile_test.go`), run through every way the Go tests run them.

    use super::*;

    /// `TestMatches`: (pattern, path, excluded).
    const MATCHES: &[(&str, &str, bool)] = &[
        ("**", "file", true),
        ("**", "file/", true),
        ("**/", "file", true),
        ("**/", "file/", true),
        ("**", "/", true),
        ("**/", "/", true),
        ("**", "dir/file", true),
        ("**/", "dir/file", true),
        ("**", "dir/file/", true),
        ("**/", "dir/file/", true),
        ("**/**", "dir/file", true),
        ("**/**", "dir/file/", true),
        ("dir/**", "dir/file", true),
        ("dir/**", "dir/file/", true),
        ("dir/**", "dir/dir2/file", true),
        ("dir/**", "dir/dir2/file/", true),
        ("**/dir", "dir", true),
        ("**/dir", "dir/file", true),
        ("**/dir2/*", "dir/dir2/file", true),
        ("**/dir2/*", "dir/dir2/file/", true),
        ("**/dir2/**", "dir/dir2/dir3/file", true),
        ("**/dir2/**", "dir/dir2/dir3/file/", true),
        ("**file", "file", true),
        ("**file", "dir/file", true),
        ("**/file", "dir/file", true),
        ("**file", "dir/dir/file", true),
        ("**/file", "dir/dir/file", true),
        ("**/file*", "dir/dir/file", true),
        ("**/file*", "dir/dir/file.txt", true),
        ("**/file*txt", "dir/dir/file.txt", true),
        ("**/file*.txt", "dir/dir/file.txt", true),
        ("**/file*.txt*", "dir/dir/file.txt", true),
        ("**/**/*.txt", "dir/dir/file.txt", true),
        ("**/**/*.txt2", "dir/dir/file.txt", false),
        ("**/*.txt", "file.txt", true),
        ("**/**/*.txt", "file.txt", true),
        ("a**/*.txt", "a/file.txt", true),
        ("a**/*.txt", "a/dir/file.txt", true),
        ("a**/*.txt", "a/dir/dir/file.txt", true),
        ("a/*.txt", "a/dir/file.txt", false),
        ("a/*.txt", "a/file.txt", true),
        ("a/*.txt**", "a/file.txt", true),
        ("a[b-d]e", "ae", false),
        ("a[b-d]e", "ace", true),
        ("a[b-d]e", "aae", false),
        ("a[^b-d]e", "aze", true),
        (".*", ".foo", true),
        (".*", "foo", false),
        ("abc.def", "abcdef", false),
        ("abc.def", "abc.def", true),
        ("abc.def", "abcZdef", false),
        ("abc?def", "abcZdef", true),
        ("abc?def", "abcdef", false),
        ("a\\\\", "a\\", true),
        ("**/foo/bar", "foo/bar", true),
        ("**/foo/bar", "dir/foo/bar", true),
        ("**/foo/bar", "dir/dir2/foo/bar", true),
        ("abc/**", "abc", false),
        ("abc/**", "abc/def", true),
        ("abc/**", "abc/def/ghi", true),
        ("**/.foo", ".foo", true),
        ("**/.foo", "bar.foo", false),
        ("a(b)c/def", "a(b)c/def", true),
        ("a(b)c/def", "a(b)c/xyz", false),
        ("a.|)$(}+{bc", "a.|)$(}+{bc", true),
        (
            "dist/proxy.py-2.4.0rc3.dev36+g08acad9-py3-none-any.whl",
            "dist/proxy.py-2.4.0rc3.dev36+g08acad9-py3-none-any.whl",
            true,
        ),
        (
            "dist/*.whl",
            "dist/proxy.py-2.4.0rc3.dev36+g08acad9-py3-none-any.whl",
            true,
        ),
        ("a\\*b", "a*b", true),
    ];

    /// `TestMatches`' multi-pattern cases.
    const MULTI: &[(&[&str], &str, bool)] = &[
        (&["**", "!util/docker/web"], "util/docker/web/foo", false),
        (
            &["**", "!util/docker/web", "util/docker/web/foo"],
            "util/docker/web/foo",
            true,
        ),
        (
            &[
                "**",
                "!dist/proxy.py-2.4.0rc3.dev36+g08acad9-py3-none-any.whl",
            ],
            "dist/proxy.py-2.4.0rc3.dev36+g08acad9-py3-none-any.whl",
            false,
        ),
        (
            &["**", "!dist/*.whl"],
            "dist/proxy.py-2.4.0rc3.dev36+g08acad9-py3-none-any.whl",
            false,
        ),
    ];

    /// The path's parents, matched one after the other from the top as a directory walk does,
    /// then the path with the last parent's results.
    fn walked(matcher: &PatternMatcher, path: &str) -> bool {
        let mut info = MatchInfo::default();
        for parent in parent_prefixes(path) {
            info = matcher.matches_using_parent_results(parent, &info).1;
        }
        matcher.matches_using_parent_results(path, &info).0
    }

    fn every_way(patterns: &[&str], path: &str, excluded: bool) {
        let matcher = PatternMatcher::new(patterns).unwrap();
        let context = format!("patterns {patterns:?}, path {path:?}");
        assert_eq!(
            matcher.matches_or_parent_matches(path),
            excluded,
            "MatchesOrParentMatches: {context}"
        );
        assert_eq!(
            walked(&matcher, path),
            excluded,
            "MatchesUsingParentResults: {context}"
        );
        assert_eq!(
            matcher
                .matches_using_parent_results(path, &MatchInfo::default())
                .0,
            excluded,
            "MatchesUsingParentResults without context: {context}"
        );
    }

    #[test]
    fn patternmatcher_test_matches() {
        for &(pattern, path, excluded) in MATCHES {
            every_way(&[pattern], path, excluded);
        }
        for &(patterns, path, excluded) in MULTI {
            every_way(patterns, path, excluded);
        }
    }

    /// `TestMatch`: Go's own `filepath.Match` cases, through the single-parent `Matches`; `None`
    /// is `ErrBadPattern`.
    #[test]
    fn patternmatcher_test_match() {
        let cases: &[(&str, &str, Option<bool>)] = &[
            ("abc", "abc", Some(true)),
            ("*", "abc", Some(true)),
            ("*c", "abc", Some(true)),
            ("a*", "a", Some(true)),
            ("a*", "abc", Some(true)),
            ("a*", "ab/c", Some(true)),
            ("a*/b", "abc/b", Some(true)),
            ("a*/b", "a/c/b", Some(false)),
            ("a*b*c*d*e*/f", "axbxcxdxe/f", Some(true)),
            ("a*b*c*d*e*/f", "axbxcxdxexxx/f", Some(true)),
            ("a*b*c*d*e*/f", "axbxcxdxe/xxx/f", Some(false)),
            ("a*b*c*d*e*/f", "axbxcxdxexxx/fff", Some(false)),
            ("a*b?c*x", "abxbbxdbxebxczzx", Some(true)),
            ("a*b?c*x", "abxbbxdbxebxczzy", Some(false)),
            ("ab[c]", "abc", Some(true)),
            ("ab[b-d]", "abc", Some(true)),
            ("ab[e-g]", "abc", Some(false)),
            ("ab[^c]", "abc", Some(false)),
            ("ab[^b-d]", "abc", Some(false)),
            ("ab[^e-g]", "abc", Some(true)),
            ("a\\*b", "a*b", Some(true)),
            ("a\\*b", "ab", Some(false)),
            ("a?b", "a☺b", Some(true)),
            ("a[^a]b", "a☺b", Some(true)),
            ("a???b", "a☺b", Some(false)),
            ("a[^a][^a][^a]b", "a☺b", Some(false)),
            ("[a-ζ]*", "α", Some(true)),
            ("*[a-ζ]", "A", Some(false)),
            ("a?b", "a/b", Some(false)),
            ("a*b", "a/b", Some(false)),
            ("[\\]a]", "]", Some(true)),
            ("[\\-]", "-", Some(true)),
            ("[x\\-]", "x", Some(true)),
            ("[x\\-]", "-", Some(true)),
            ("[x\\-]", "z", Some(false)),
            ("[\\-x]", "x", Some(true)),
            ("[\\-x]", "-", Some(true)),
            ("[\\-x]", "a", Some(false)),
            ("[]a]", "]", None),
            ("[-]", "-", None),
            ("[x-]", "x", None),
            ("[x-]", "-", None),
            ("[x-]", "z", None),
            ("[-x]", "x", None),
            ("[-x]", "-", None),
            ("[-x]", "a", None),
            ("\\", "a", None),
            ("[a-b-c]", "a", None),
            ("[", "a", None),
            ("[^", "a", None),
            ("[^bc", "a", None),
            ("a[", "a", None),
            ("a[", "ab", None),
            ("*x", "xxx", Some(true)),
        ];
        for &(pattern, path, expected) in cases {
            let got = PatternMatcher::new(&[pattern])
                .ok()
                .map(|matcher| matcher.matches_single_parent(path));
            assert_eq!(got, expected, "pattern {pattern:?}, path {path:?}");
        }
    }

    /// The single-pattern cases of `TestPatternMatches…`/`TestExclusionPattern…`.
    #[test]
    fn patternmatcher_single_parent_cases() {
        let cases: &[(&[&str], &str, bool)] = &[
            (&["*"], "fileutils.go", true),
            (&["*.go"], "fileutils.go", true),
            (&["!fileutils.go", "*.go"], "fileutils.go", true),
            (&["docs", "!docs/README.md"], "docs/README.md", false),
            (&["docs/", "!docs/README.md"], "docs/README.md", false),
            (&["docs/*", "!docs/README.md"], "docs/README.md", false),
            (&["*.go", "!fileutils.go"], "fileutils.go", false),
            (&["*.go"], ".", false),
            (&[], "/any/path/there", false),
        ];
        for &(patterns, path, excluded) in cases {
            let matcher = PatternMatcher::new(patterns).unwrap();
            assert_eq!(
                matcher.matches_single_parent(path),
                excluded,
                "patterns {patterns:?}, path {path:?}"
            );
        }
    }

    #[test]
    fn bad_patterns_are_refused() {
        assert!(PatternMatcher::new(&["!"]).is_err());
        assert!(PatternMatcher::new(&["["]).is_err());
        // moby/moby#52203: Docker accepts it, then fails on the first path (range `l-O`).
        assert!(PatternMatcher::new(&["[Local-Only]/"]).is_err());
    }

    /// `TestCleanPatterns*`.
    #[test]
    fn patterns_are_trimmed_and_empty_ones_dropped() {
        let matcher = PatternMatcher::new(&["docs", "config", ""]).unwrap();
        assert_eq!(matcher.patterns().len(), 2);
        assert!(!matcher.has_exclusions());
        for patterns in [
            ["docs", "!docs/README.md"],
            ["docs", "  !docs/README.md"],
            ["docs", "!docs/README.md  "],
        ] {
            let matcher = PatternMatcher::new(&patterns).unwrap();
            assert!(matcher.has_exclusions(), "{patterns:?}");
        }
    }

    /// `TestCompile`: which patterns are plain string comparisons.
    #[test]
    fn patternmatcher_test_compile_types() {
        let kind = |pattern: &str| compile(&clean_path(pattern)).unwrap();
        for exact in [
            "abc.def",
            "a(b)c/def",
            "a.|)$(}+{bc",
            "dist/proxy.py-2.4.0rc3.dev36+g08acad9-py3-none-any.whl",
        ] {
            assert_eq!(kind(exact), MatchKind::Exact, "{exact}");
        }
        assert_eq!(kind("dir/**"), MatchKind::Prefix("dir/".into()));
        assert_eq!(kind("**"), MatchKind::Suffix(String::new()));
        assert_eq!(kind("**/dir"), MatchKind::Suffix("/dir".into()));
        assert_eq!(kind("**file"), MatchKind::Suffix("file".into()));
        assert_eq!(kind("**/foo/bar"), MatchKind::Suffix("/foo/bar".into()));
        for glob in [
            "*",
            "file*",
            "*file",
            "a*/b",
            "**/**",
            "**/dir2/*",
            "**/dir2/**",
            "**/file*txt",
            "**/**/*.txt",
            "a[b-d]e",
            ".*",
            "abc?def",
        ] {
            assert!(matches!(kind(glob), MatchKind::Glob(_)), "{glob}");
        }
    }

    /// `TestReadAll`.
    #[test]
    fn ignorefile_test_read_all() {
        let content = "test1\n/test2\n/a/file/here\n\nlastfile\n# this is a comment\n! /inverted/abs/path\n!\n! ";
        assert_eq!(
            read_patterns(content),
            [
                "test1",
                "test2",
                "a/file/here",
                "lastfile",
                "!inverted/abs/path",
                "!",
                "!"
            ]
        );
        assert_eq!(read_patterns(""), Vec::<String>::new());
    }

    #[test]
    fn read_patterns_cleans_like_docker() {
        assert_eq!(
            read_patterns("\u{feff}./a//b/\r\n  # not a comment\n../up\n/\n!./keep/./me/\n"),
            ["a/b", "# not a comment", "../up", "/", "!keep/me"]
        );
    }

    #[test]
    fn clean_path_is_go_path_clean() {
        for (path, cleaned) in [
            ("", "."),
            (".", "."),
            ("./", "."),
            ("a/./b/", "a/b"),
            ("a//b", "a/b"),
            ("a/../b", "b"),
            ("a/../..", ".."),
            ("../../a", "../../a"),
            ("/../a", "/a"),
            ("/", "/"),
            ("//a", "/a"),
            ("!./foo", "!./foo"),
        ] {
            assert_eq!(clean_path(path), cleaned, "{path:?}");
        }
    }
}
