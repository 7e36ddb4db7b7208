//! `support-desk login PREFIX`, `support-desk logout PREFIX`, and each server's sign-in
//! state for `support-desk servers`.
