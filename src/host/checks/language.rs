//! The language a reply is written in. The desk answers in English, and in the customer's own
//! language when they wrote in another; a reply in any third language (a refusal in French to
//! a customer who wrote English) goes to a person. The desk has no language setting, so
//! English is its language.
//!
//! Detection is small on purpose: a script other than Latin by its letters, and a language
//! written in Latin letters by its commonest short words, counted against English's. Text too
//! short to tell is taken as the desk's.

use super::{Finding, listed, work};

/// The desk's own language.
const DESK: Language = Language::Words("English");

/// Common words of each language that are not English words too.
const STOP_WORDS: [(&str, &str); 7] = [
    (
        "English",
        "the and is are you your we our have has not this that with for will be it of to \
         please thank thanks hello hi my was can would",
    ),
    (
        "French",
        "je vous nous est les des une pas avec pour dans sur mais cette votre vos merci \
         bonjour suis très ne que qui peux sont commande madame monsieur cordialement",
    ),
    (
        "German",
        "ich sie wir ist nicht und der das ein eine mit für auf ihre ihr ihnen bitte danke \
         vielen dank sehr haben wird dem den bestellung geehrte grüße freundlichen",
    ),
    (
        "Spanish",
        "el los las una por para con usted su está gracias hola pero muy pedido estimado \
         saludos del puedo",
    ),
    (
        "Italian",
        "il gli una con che non sono è grazie ciao della del suo sua ordine buongiorno \
         gentile cordiali saluti",
    ),
    (
        "Dutch",
        "ik het een niet met voor van zijn uw wij bedankt hallo dank bestelling graag groeten",
    ),
    (
        "Portuguese",
        "eu você não com para uma obrigado obrigada olá seu sua está pedido",
    ),
];

/// Scripts by the letters' code points.
const SCRIPTS: [(&str, char, char); 10] = [
    ("Greek", '\u{0370}', '\u{03ff}'),
    ("Cyrillic", '\u{0400}', '\u{04ff}'),
    ("Hebrew", '\u{0590}', '\u{05ff}'),
    ("Arabic", '\u{0600}', '\u{06ff}'),
    ("Devanagari", '\u{0900}', '\u{097f}'),
    ("Thai", '\u{0e00}', '\u{0e7f}'),
    ("Japanese", '\u{3040}', '\u{30ff}'),
    ("Chinese", '\u{4e00}', '\u{9fff}'),
    ("Korean", '\u{ac00}', '\u{d7af}'),
    ("Georgian", '\u{10a0}', '\u{10ff}'),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Language {
    /// Told by its words (Latin letters).
    Words(&'static str),
    /// Told by its script.
    Script(&'static str),
}

impl Language {
    fn name(self) -> String {
        match self {
            Language::Words(name) => name.to_owned(),
            Language::Script(name) => format!("{name} script"),
        }
    }
}

/// The reply written in a language neither the desk nor the customer (`ticket_text`) wrote,
/// with its first sentence in that language.
pub(super) fn check(text: &str, ticket_text: &str) -> Option<Finding> {
    let reply = detect(text, 3)?;
    if reply == DESK || detect(ticket_text, 3) == Some(reply) {
        return None;
    }
    let words = text
        .split_inclusive(['.', '!', '?', '\n'])
        .map(str::trim)
        .find(|sentence| detect(sentence, 2) == Some(reply))
        .map_or_else(|| crate::text::cut(text.trim(), 80), str::to_owned);
    Some(Finding::NotForCustomer {
        kind: format!(
            "text in {}, not the desk's or the customer's language",
            reply.name()
        ),
        words,
    })
}

/// The language of `text`: a script whose letters outnumber the Latin ones (at least
/// `least` of them), or the language with the most common words (at least `least`, and
/// more than English's); English when it has any, else unknown.
fn detect(text: &str, least: usize) -> Option<Language> {
    let mut scripts = [0usize; SCRIPTS.len()];
    let mut latin = 0usize;
    for c in text.chars().filter(|c| c.is_alphabetic()) {
        work::step(1);
        match SCRIPTS
            .iter()
            .position(|(_, from, to)| (*from..=*to).contains(&c))
        {
            Some(i) => scripts[i] += 1,
            None => {
                latin += usize::from(c.is_ascii_alphabetic() || ('\u{c0}'..='\u{24f}').contains(&c))
            }
        }
    }
    let (most, count) = scripts
        .iter()
        .enumerate()
        .max_by_key(|(_, n)| **n)
        .map(|(i, n)| (i, *n))
        .unwrap_or_default();
    if count >= least && count > latin {
        return Some(Language::Script(SCRIPTS[most].0));
    }
    let mut counts = [0usize; STOP_WORDS.len()];
    for word in text
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty())
    {
        work::step(1);
        let word = word.to_lowercase();
        for (i, (_, list)) in STOP_WORDS.iter().enumerate() {
            counts[i] += usize::from(listed(list, &word));
        }
    }
    let english = counts[0];
    let (best, most) = counts
        .iter()
        .enumerate()
        .skip(1)
        .max_by_key(|(i, n)| (**n, std::cmp::Reverse(*i)))
        .map(|(i, n)| (i, *n))
        .unwrap_or_default();
    if most >= least && most > english {
        Some(Language::Words(STOP_WORDS[best].0))
    } else {
        (english > 0).then_some(DESK)
    }
}
