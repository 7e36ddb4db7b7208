fn main() -> std::process::ExitCode {
    support_desk::conformance::main()
}
