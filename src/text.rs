//! Small facts about text that the desk and the servers it ships state the same way.

/// At most `max` characters of `text`, marked with the whole length when cut: a message about
/// a three-megabyte "order number" need not repeat it.
pub fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((end, _)) => format!("{}… ({} characters)", &text[..end], text.chars().count()),
    }
}

#[cfg(test)]
mod tests {
    use super::cut;

    #[test]
    fn text_is_cut_at_a_character_and_says_its_whole_length() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("ünïcödé", 3), "ünï… (7 characters)");
        assert_eq!(cut("", 0), "");
        assert_eq!(cut("ab", 0), "… (2 characters)");
    }
}
