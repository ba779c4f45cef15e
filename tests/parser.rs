//! The Dockerfile parser on its own fixtures (`fixtures/grammar`: each
//! `<case>.Dockerfile` must dump to `<case>.dump`, BuildKit's `Node.Dump`
//! format), on spans, on the typed layer, and on hostile input.

use std::fs;
use std::path::Path;

use cudalint::dockerfile::ast::{Command, HealthcheckCommand, ShellOrExec};
use cudalint::dockerfile::{dump, parse, parse_bytes, parse_syntax};
use cudalint::source::SourceFile;

#[test]
fn grammar_fixtures_dump_like_buildkit() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/grammar");
    let mut cases: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "Dockerfile"))
        .collect();
    cases.sort();
    assert!(
        cases.len() >= 11,
        "expected the grammar fixtures, found {}",
        cases.len()
    );
    let mut failures = Vec::new();
    for case in &cases {
        let expected = fs::read_to_string(case.with_extension("dump")).unwrap();
        match parse_bytes(&fs::read(case).unwrap()) {
            Ok(dockerfile) => {
                let got = dump(&dockerfile);
                if got != expected {
                    failures.push(format!(
                        "{}:\n--- expected\n{expected}--- got\n{got}",
                        case.display()
                    ));
                }
            }
            Err(e) => failures.push(format!("{}: {e} at {:?}", case.display(), e.span)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn fixture(name: &str) -> String {
    fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/grammar")
            .join(name),
    )
    .unwrap()
}

#[test]
fn heredoc_bodies_and_markers() {
    let text = fixture("heredocs.Dockerfile");
    let df = parse(&text).unwrap();
    let docs: Vec<_> = df.instructions.iter().map(|i| i.heredocs.len()).collect();
    assert_eq!(docs, [0, 1, 1, 2, 1, 2, 0]);

    let run = &df.instructions[1].heredocs[0];
    assert_eq!(
        (run.name.as_str(), run.content.as_str(), run.expand),
        ("EOF", "echo hi\n", true)
    );
    assert_eq!(&text[run.body_span.start..run.body_span.end], "echo hi\n");

    let chomped = &df.instructions[2].heredocs[0];
    assert!(chomped.chomp);
    assert_eq!(chomped.content, "echo tabbed\n");
    assert_eq!(
        &text[chomped.body_span.start..chomped.body_span.end],
        "\techo tabbed\n"
    );

    let copy = &df.instructions[3];
    assert_eq!(copy.heredocs[0].name, "A");
    assert!(copy.heredocs[0].expand);
    assert_eq!(copy.heredocs[1].name, "B");
    assert!(
        !copy.heredocs[1].expand,
        "a quoted delimiter turns expansion off"
    );
    assert_eq!(copy.heredocs[1].content, "beta $HOME\n");
    let Command::Copy(c) = &copy.command else {
        panic!("{:?}", copy.command)
    };
    assert_eq!(
        c.sources
            .iter()
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>(),
        ["<<A", "<<\"B\""]
    );
    assert_eq!(c.dest.text, "/dest/");

    let python = &df.instructions[4];
    assert_eq!(python.heredocs[0].name, "PY");
    assert!(!python.heredocs[0].expand);
    assert_eq!(python.heredocs[0].content, "print(\"x\")\n");

    let two = &df.instructions[5];
    assert_eq!(two.heredocs[0].content, "one\n");
    assert_eq!(two.heredocs[1].content, "two\n");
    assert_eq!((two.start_line, two.end_line), (16, 20));
    assert!(text[two.span.start..two.span.end].ends_with("EOF2"));
}

#[test]
fn span_of_from_flag() {
    let text = "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04 AS build\nFROM ubuntu:22.04\nCOPY --link --from=build /usr/local/cuda /usr/local/cuda\n";
    let df = parse(text).unwrap();
    let copy = &df.instructions[2];
    let from = copy.flags.iter().find(|f| f.name == "from").unwrap();
    assert_eq!(&text[from.span.start..from.span.end], "--from=build");
    assert_eq!(from.value.as_deref(), Some("build"));
    let Command::Copy(c) = &copy.command else {
        panic!()
    };
    let from_word = c.from.as_ref().unwrap();
    assert_eq!(
        (from_word.text.as_str(), from_word.span),
        ("build", from.span)
    );
    assert!(c.link);
    let Command::From(f) = &df.instructions[0].command else {
        panic!()
    };
    let stage = f.stage_name.as_ref().unwrap();
    assert_eq!(&text[stage.span.start..stage.span.end], "build");
    assert_eq!(
        &text[copy.keyword_span.start..copy.keyword_span.end],
        "COPY"
    );
}

#[test]
fn rest_maps_words_on_continued_lines() {
    let text = "FROM ubuntu:22.04\nRUN apt-get update \\\n    && apt-get install -y \\\n       cuda-toolkit-12-4\n";
    let df = parse(text).unwrap();
    let run = &df.instructions[1];
    assert_eq!((run.start_line, run.end_line), (2, 4));
    let rest = &run.rest;
    let at = rest.text.find("cuda-toolkit").unwrap();
    let span = rest.file_span(at, at + "cuda-toolkit-12-4".len());
    assert_eq!(&text[span.start..span.end], "cuda-toolkit-12-4");
    let file = SourceFile::new("Dockerfile", text);
    assert_eq!(file.line_col(span.start).line, 4);
    let second = rest.text.rfind("apt-get").unwrap();
    let span = rest.file_span(second, second + 7);
    assert_eq!(&text[span.start..span.end], "apt-get");
    assert_eq!(file.line_col(span.start).line, 3);
    let Command::Run(r) = &run.command else {
        panic!()
    };
    assert!(matches!(&r.command, ShellOrExec::Shell(s) if s == rest));
    // The instruction ends at its last line, without the line ending.
    assert!(text[run.span.start..run.span.end].ends_with("cuda-toolkit-12-4"));
}

#[test]
fn comments_are_kept_with_lines() {
    let text = "# syntax=docker/dockerfile:1\n# cudalint ignore=CU101\nFROM a\nRUN x \\\n  # inside\n  y\n   # indented\n";
    let df = parse(text).unwrap();
    assert_eq!(df.directives.len(), 1);
    assert_eq!(
        (
            df.directives[0].name.as_str(),
            df.directives[0].value.as_str()
        ),
        ("syntax", "docker/dockerfile:1")
    );
    let comments: Vec<_> = df
        .comments
        .iter()
        .map(|c| (c.line, c.text.as_str()))
        .collect();
    assert_eq!(
        comments,
        [(2, "cudalint ignore=CU101"), (5, "inside"), (7, "indented")]
    );
    let c = &df.comments[2];
    assert_eq!(&text[c.span.start..c.span.end], "# indented");
    assert_eq!(df.instructions[1].rest.text, "x   y");
}

#[test]
fn directives_and_escape() {
    let df = parse(&fixture("directives.Dockerfile")).unwrap();
    let names: Vec<_> = df
        .directives
        .iter()
        .map(|d| (d.name.as_str(), d.value.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("syntax", "docker/dockerfile:1"),
            ("check", "skip=JSONArgsRecommended"),
            ("escape", "\\")
        ]
    );
    assert_eq!(
        df.escape, '\\',
        "the later `# escape=` comes after a plain comment and is ignored"
    );
    let df = parse(&fixture("escape-backtick.Dockerfile")).unwrap();
    assert_eq!(df.escape, '`');

    let duplicate = parse("# escape=`\n# ESCAPE=`\nFROM a\n").unwrap_err();
    assert!(duplicate.message.contains("only one escape"), "{duplicate}");
    assert_eq!(duplicate.span.start, 11);
    let invalid = parse("# escape=x\nFROM a\n").unwrap_err();
    assert!(
        invalid.message.contains("invalid escape token"),
        "{invalid}"
    );
}

#[test]
fn empty_continuation_line_warns() {
    let df = parse(&fixture("continuation-comments.Dockerfile")).unwrap();
    assert_eq!(df.warnings.len(), 1);
    assert_eq!(df.comments.len(), 1);
    assert_eq!(df.comments[0].line, 3);
}

#[test]
fn typed_layer() {
    let df = parse(&fixture("flags.Dockerfile")).unwrap();
    let Command::From(from) = &df.instructions[0].command else {
        panic!()
    };
    assert_eq!(from.platform.as_deref(), Some("$BUILDPLATFORM"));
    assert_eq!(
        from.stage_name.as_ref().unwrap().text,
        "build",
        "stage names are lower-cased"
    );
    let Command::Run(run) = &df.instructions[2].command else {
        panic!()
    };
    assert_eq!(run.mounts.len(), 2);
    assert_eq!(
        (run.mounts[0].kind.as_str(), run.mounts[0].target.as_deref()),
        ("cache", Some("/root/.cache"))
    );
    assert_eq!(run.mounts[1].kind, "secret");
    let Command::Run(run) = &df.instructions[5].command else {
        panic!()
    };
    assert_eq!(run.network.as_deref(), Some("none"));
    let Command::Run(run) = &df.instructions[6].command else {
        panic!()
    };
    assert_eq!(run.mounts[0].source.as_deref(), Some("a b"));

    let df = parse(&fixture("arg-env-label.Dockerfile")).unwrap();
    let Command::Arg(args) = &df.instructions[0].command else {
        panic!()
    };
    assert_eq!(
        args.iter()
            .map(|a| (a.name.as_str(), a.default.as_deref()))
            .collect::<Vec<_>>(),
        [("VERSION", Some("1.0")), ("OTHER", None)]
    );
    let Command::Env(env) = &df.instructions[2].command else {
        panic!()
    };
    assert_eq!(
        env.iter()
            .map(|kv| (kv.key.as_str(), kv.value.as_str()))
            .collect::<Vec<_>>(),
        [("PATH", "/usr/local/bin:$PATH"), ("LANG", "C.UTF-8")]
    );
    let Command::Env(legacy) = &df.instructions[3].command else {
        panic!()
    };
    assert_eq!(legacy[0].value, "some value here");
    let Command::Label(labels) = &df.instructions[4].command else {
        panic!()
    };
    assert_eq!(
        (labels[0].key.as_str(), labels[0].value.as_str()),
        ("com.example.vendor", "ACME Inc")
    );
    let Command::Arg(args) = &df.instructions[6].command else {
        panic!()
    };
    assert_eq!(args[0].default.as_deref(), Some(""));
    assert_eq!(args[1].default.as_deref(), Some("x y"));

    let df = parse(&fixture("healthcheck.Dockerfile")).unwrap();
    let Command::Healthcheck(HealthcheckCommand::Check {
        test: ShellOrExec::Shell(s),
        options,
    }) = &df.instructions[1].command
    else {
        panic!()
    };
    assert_eq!(s.text, "curl -f http://localhost/ || exit 1");
    assert_eq!(options.len(), 2);
    assert!(
        matches!(&df.instructions[2].command, Command::Healthcheck(HealthcheckCommand::Check { test: ShellOrExec::Exec(w), .. }) if w.len() == 2)
    );
    assert!(matches!(
        df.instructions[3].command,
        Command::Healthcheck(HealthcheckCommand::None)
    ));

    let df = parse(&fixture("onbuild.Dockerfile")).unwrap();
    let Command::Onbuild(inner) = &df.instructions[2].command else {
        panic!()
    };
    assert!(matches!(&inner.command, Command::Copy(c) if c.from.as_ref().unwrap().text == "x"));
    assert_eq!(df.instructions[3].heredocs.len(), 1);
    let df = parse(&fixture("unknown.Dockerfile")).unwrap();
    assert!(matches!(df.instructions[1].command, Command::Unknown));
    assert_eq!(df.instructions[1].keyword, "foo");
}

#[test]
fn exec_form_words_have_spans() {
    let text = "FROM a\nCMD [\"python\", \"-c\", \"print(1)\"]\n";
    let df = parse(text).unwrap();
    let Command::Cmd(ShellOrExec::Exec(words)) = &df.instructions[1].command else {
        panic!()
    };
    let w = &words[2];
    assert_eq!(w.text, "print(1)");
    assert_eq!(&text[w.span.start..w.span.end], "\"print(1)\"");
}

#[test]
fn instruction_errors_are_located() {
    let cases = [
        (
            "FROM busybox\n\nENV PATH\n",
            "ENV must have two arguments",
            "ENV PATH",
        ),
        (
            "FROM a b\n",
            "FROM requires either one or three arguments",
            "FROM a b",
        ),
        (
            "FROM a\nCOPY --user=me x /y\n",
            "unknown flag: --user",
            "--user=me",
        ),
        (
            "FROM a\nCOPY x\n",
            "requires at least two arguments",
            "COPY x",
        ),
        (
            "FROM a\nCOPY --link=maybe x /y\n",
            "expecting boolean value",
            "--link=maybe",
        ),
        (
            "FROM a\nRUN --network=bridge true\n",
            "invalid network mode",
            "--network=bridge",
        ),
        (
            "FROM a\nRUN --mount=type=bind,from=$X true\n",
            "doesn't support variable expansion",
            "--mount=type=bind,from=$X",
        ),
        ("FROM a AS 1st\n", "invalid name for build stage", "1st"),
        (
            "FROM a\nONBUILD FROM b\n",
            "isn't allowed as an ONBUILD trigger",
            "FROM",
        ),
        (
            "FROM a\nONBUILD ONBUILD RUN x\n",
            "Chaining ONBUILD",
            "ONBUILD",
        ),
        (
            "FROM a\nSHELL /bin/sh -c\n",
            "SHELL requires the arguments to be in JSON form",
            "SHELL /bin/sh -c",
        ),
        (
            "FROM a\nCMD [\"a\", 1]\n",
            "arrays must be comprised of strings only",
            "CMD [\"a\", 1]",
        ),
        (
            "FROM a\nHEALTHCHECK --interval=1us CMD true\n",
            "cannot be less than 1ms",
            "--interval=1us",
        ),
        (
            "FROM a\nCOPY <<EOF <<EOF2\nx\nEOF\ny\nEOF2\n",
            "cannot accept a heredoc as a destination",
            "<<EOF2",
        ),
    ];
    for (text, message, located) in cases {
        let error = parse(text).unwrap_err();
        assert!(
            error.message.contains(message),
            "{text:?}: got {:?}",
            error.message
        );
        assert_eq!(&text[error.span.start..error.span.end], located, "{text:?}");
    }
    // The parser alone accepts what only the instruction checks reject.
    let (df, errors) = parse_syntax("FROM a\nCOPY --user=me x /y\n").unwrap();
    assert_eq!((df.instructions.len(), errors.len()), (2, 1));
}

#[test]
fn invalid_utf8_is_located() {
    let error = parse_bytes(b"FROM a\nRUN echo \xff\xfe\n").unwrap_err();
    assert!(error.message.contains("invalid UTF-8"), "{}", error.message);
    assert_eq!(error.span.start, 16);
}

#[test]
fn nul_bytes_mean_binary() {
    let error = parse_bytes(b"FROM a\n\0\0\0ELF").unwrap_err();
    assert!(error.message.contains("binary"), "{}", error.message);
    assert_eq!(error.span.start, 7);
}

#[test]
fn empty_and_comment_only_files_have_no_instructions() {
    for text in ["", "\n\n", "# just a comment\n", "\u{feff}"] {
        let error = parse(text).unwrap_err();
        assert_eq!(error.message, "file with no instructions");
        assert!(error.span.end <= text.len());
    }
}

#[test]
fn unterminated_heredoc_is_an_error() {
    let text = "FROM a\nRUN <<EOF\necho never closed\n";
    let error = parse(text).unwrap_err();
    assert!(
        error.message.contains("unterminated heredoc"),
        "{}",
        error.message
    );
    assert_eq!(error.span.start, 7);
    assert!(error.span.end <= text.len());
}

#[test]
fn unterminated_json_falls_back_to_shell_form() {
    let df = parse("FROM a\nCMD [\"a\", \"b\"\n").unwrap();
    assert!(!df.instructions[1].json);
    assert!(
        matches!(&df.instructions[1].command, Command::Cmd(ShellOrExec::Shell(s)) if s.text == "[\"a\", \"b\"")
    );
}

#[test]
fn line_longer_than_buildkit_scanner_is_an_error() {
    let text = format!("FROM a\nRUN {}\n", "x".repeat(1 << 20));
    let error = parse(&text).unwrap_err();
    assert!(
        error.message.contains("max allowed size"),
        "{}",
        error.message
    );
    assert_eq!(error.span.start, 7);
    assert!(error.span.end <= text.len());
    // Just under the limit is fine.
    let text = format!("FROM a\nRUN {}\n", "x".repeat(65_530));
    assert!(parse(&text).is_ok());
}

#[test]
fn hundred_thousand_continuation_lines() {
    let mut text = String::from("FROM a\nRUN true");
    for _ in 0..100_000 {
        text.push_str(" \\\n  && true");
    }
    text.push('\n');
    let df = parse(&text).unwrap();
    assert_eq!(df.instructions.len(), 2);
    assert_eq!(df.instructions[1].end_line, 100_002);
    let rest = &df.instructions[1].rest;
    let last = rest.text.len();
    let span = rest.file_span(last - 4, last);
    assert_eq!(&text[span.start..span.end], "true");
}

#[test]
fn fifty_megabytes_parse() {
    let block = "RUN apt-get update \\\n    && apt-get install -y --no-install-recommends cuda-libraries-12-4 \\\n    && rm -rf /var/lib/apt/lists/*\n# comment\nENV PATH=/usr/local/cuda/bin:$PATH\n";
    let mut text = String::with_capacity(50 << 20);
    text.push_str("FROM nvidia/cuda:12.4.1-base-ubuntu22.04\n");
    while text.len() < 50 << 20 {
        text.push_str(block);
    }
    let df = parse(&text).unwrap();
    assert_eq!(
        df.instructions.len(),
        1 + 2 * ((text.len() - 41) / block.len())
    );
}

#[test]
fn hostile_nesting_does_not_overflow() {
    // Continuations build logical lines far longer than one physical line
    // may be, so the nesting is not stopped by the line-length limit.
    let continued = |unit: &str, times: usize| {
        let line = unit.repeat(1_000);
        (0..times)
            .map(|_| format!("{line}\\\n"))
            .collect::<String>()
    };
    let onbuild = format!("FROM a\n{}RUN x\n", continued("ONBUILD ", 20));
    let error = parse(&onbuild).unwrap_err();
    assert!(
        error.message.contains("nested too deeply"),
        "{}",
        error.message
    );
    assert!(error.span.end <= onbuild.len());

    let json = format!("FROM a\nCMD {}\n", continued("[", 200));
    let df = parse(&json).unwrap();
    assert!(
        !df.instructions[1].json,
        "past Go's nesting limit the JSON is invalid: shell form"
    );
    let json = format!("FROM a\nCMD {}{}\n", continued("[", 10), continued("]", 10));
    assert!(parse(&json).unwrap_err().message.contains("strings only"));

    let vars = format!("FROM a\nRUN {}<<EOF\nEOF\n", continued("${a:-", 5));
    assert!(parse(&vars).is_ok());
}

#[test]
fn lone_escape_line_makes_an_empty_instruction_in_place() {
    // Found by fuzzing: a logical line with no text still sits where it began.
    let text = "FROM a\n\\\n   \n";
    let (df, _) = parse_syntax(text).unwrap();
    assert_eq!(dump(&df), "(from \"a\")\n(\"\")\n");
    let empty = &df.instructions[1];
    assert_eq!((empty.keyword.as_str(), empty.span.start), ("", 7));
    assert!(empty.span.start >= df.instructions[0].span.end);
}
