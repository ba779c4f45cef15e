//! The `cudalint` binary: parses arguments, runs, and turns errors into
//! exit status 2 with their whole cause chain. Everything else is in
//! `cudalint::cli`.

use std::process::ExitCode;

// Linting allocates many small strings (words, spans, messages); mimalloc
// halves the time the system allocator took (see benches/lint.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        // `cudalint … | head` closing the pipe is not a failure.
        Err(error) if cudalint::cli::is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("cudalint: error: {error:#}");
            cudalint::cli::error_exit_code()
        }
    }
}

fn run() -> anyhow::Result<ExitCode> {
    cudalint::cli::main_with(std::env::args_os())
}
