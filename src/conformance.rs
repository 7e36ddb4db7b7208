//! (being written)
pub fn main() -> std::process::ExitCode {
    std::process::ExitCode::FAILURE
}
