fn main() -> std::process::ExitCode {
    support_desk::cli::main()
}
