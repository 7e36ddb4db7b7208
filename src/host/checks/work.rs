//! A count of the draft check's inner steps, kept only in this crate's unit tests: a test
//! can then show that the work grows with the text and not with its square, without timing
//! anything. Each scan of the check calls [`step`] once per item it looks at; outside tests
//! the call is empty and compiles to nothing.

#[cfg(test)]
use std::cell::Cell;

#[cfg(test)]
thread_local! {
    static STEPS: Cell<u64> = const { Cell::new(0) };
}

#[cfg(test)]
pub fn step(items: usize) {
    STEPS.with(|s| s.set(s.get() + items as u64));
}

#[cfg(not(test))]
#[inline(always)]
pub fn step(_items: usize) {}

/// The steps `f` took on this thread.
#[cfg(test)]
pub fn steps_of(f: impl FnOnce()) -> u64 {
    let before = STEPS.with(Cell::get);
    f();
    STEPS.with(Cell::get) - before
}
