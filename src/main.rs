support_desk::global_allocator!();

fn main() -> std::process::ExitCode {
    support_desk::cli::main()
}
