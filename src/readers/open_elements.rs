//! The stack of open elements of a page being tokenized, bounded, with every query in constant
//! time.
//!
//! The HTML reader does not build a tree: it follows the elements open at each token, as a
//! browser's tree builder does, closely enough to know whether text is inside a hidden, link
//! or main element and where blocks end. The tree builder's rules it follows (in
//! `html/extract.rs`) ask "is there an open `X` in this scope?" and "close everything down to that
//! `X`"; here both cost O(1) plus the elements closed, so the work over a page is linear in its
//! size whatever its nesting:
//!
//! - each run of identical elements (same name, same flags) is held once with a count, so
//!   100,000 nested `<div>`s are one entry;
//! - each entry knows the nearest scope boundary of every kind at or below it, and the entry
//!   of the same name below it, so a lookup never walks the stack;
//! - at most [`MAX_RUNS`] entries are held. When a page opens more, the oldest half is
//!   forgotten at once (amortised O(1) per element): what is open near the text is what
//!   decides about it, and sloppy pages leave thousands of elements open far below. A
//!   forgotten element no longer hides, marks main text or a link, and its end tag is ignored.
//!
//! Entry 0 is a root that bounds every scope and is never closed.

use html5ever::LocalName;
use rustc_hash::FxHashMap;

/// The most entries (runs of identical elements) held at once.
pub(crate) const MAX_RUNS: usize = 2048;

/// The kinds of scope of the HTML standard's tree construction, and two more boundaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scope {
    /// "Has an element in scope".
    Default,
    /// "In button scope": the default boundaries and `button`.
    Button,
    /// "In list item scope": the default boundaries, `ol` and `ul`.
    List,
    /// "In table scope": `html`, `table`, `template`.
    Table,
    /// The "special" elements: an end tag of an ordinary element does not close past them.
    Special,
    /// The special elements but `address`, `div` and `p`: where `<li>`, `<dd>` and `<dt>`
    /// stop looking for one to close.
    SpecialNotAdp,
    /// The `svg` or `math` element that opened foreign content.
    Foreign,
}

const SCOPES: usize = 7;

impl Scope {
    fn index(self) -> usize {
        self as usize
    }

    /// The bit of this scope in the `bounds` of [`OpenElements::push`].
    pub(super) fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// Flags of an open element.
pub(super) mod flags {
    /// Its content is not kept (invisible, furniture or boilerplate).
    pub(crate) const HIDES: u8 = 1;
    /// A visible `<main>`, `<article>` or `role="main"`.
    pub(crate) const MAIN: u8 = 2;
    /// A visible `<a>`.
    pub(crate) const LINK: u8 = 4;
    /// An element that starts and ends a block of text.
    pub(crate) const BLOCK: u8 = 8;
    /// An element of SVG or MathML content.
    pub(crate) const FOREIGN: u8 = 16;
}

/// A run of identical open elements.
#[derive(Debug)]
struct Run {
    name: LocalName,
    flags: u8,
    /// How many are open; 0 for an element closed out of order below others (see
    /// [`OpenElements::remove`]), kept until the entries above it close.
    count: u32,
    /// The entry of the nearest open element of the same name below, 0 if none.
    same_below: u32,
    /// For each [`Scope`], the nearest entry at or below this one that bounds it.
    bound: [u32; SCOPES],
    /// The innermost doubtful element (see [`OpenElements::push`]) open at or below this entry
    /// with no main element between, 0 if none.
    doubt: u32,
}

/// An element closed, as the text extraction sees it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Closed {
    /// Its flags.
    pub(super) flags: u8,
    /// Whether it was visible: not hiding and not inside a hiding element.
    pub(super) visible: bool,
    /// Whether a main element is still open.
    pub(super) in_main: bool,
    /// The doubtful element text is now in ([`OpenElements::doubt`]).
    pub(super) doubt: u32,
}

/// The open elements, with counts of the hiding, main and link ones.
#[derive(Debug)]
pub(super) struct OpenElements {
    runs: Vec<Run>,
    /// The topmost live entry of each name.
    top_of: FxHashMap<LocalName, u32>,
    hidden: u64,
    main: u64,
    link: u64,
}

impl OpenElements {
    pub(super) fn new() -> OpenElements {
        OpenElements {
            runs: vec![Run {
                name: LocalName::from(""),
                flags: 0,
                count: 1,
                same_below: 0,
                bound: [0; SCOPES],
                doubt: 0,
            }],
            top_of: FxHashMap::default(),
            hidden: 0,
            main: 0,
            link: 0,
        }
    }

    /// Whether text here is inside a hiding element.
    pub(super) fn hidden(&self) -> bool {
        self.hidden > 0
    }

    /// Whether text here is inside a visible main element.
    pub(super) fn in_main(&self) -> bool {
        self.main > 0
    }

    /// Whether text here is inside a visible link.
    pub(super) fn in_link(&self) -> bool {
        self.link > 0
    }

    /// The innermost doubtful element that text here is in, with no main element between
    /// (a main element inside a doubtful one is out of its reach); 0 if none.
    pub(super) fn doubt(&self) -> u32 {
        self.top().doubt
    }

    fn top(&self) -> &Run {
        // The root is never removed, so `runs` is never empty.
        &self.runs[self.runs.len() - 1]
    }

    fn top_index(&self) -> u32 {
        (self.runs.len() - 1) as u32
    }

    /// The name of the current node (`None` at the root).
    pub(super) fn current(&self) -> Option<&LocalName> {
        (self.runs.len() > 1).then(|| &self.top().name)
    }

    /// The flags of the current node (0 at the root).
    pub(super) fn current_flags(&self) -> u8 {
        self.top().flags
    }

    /// The entry of the topmost open element named `name`.
    pub(super) fn topmost(&self, name: &LocalName) -> Option<u32> {
        self.top_of.get(name).copied()
    }

    /// The entry of the topmost open `name` if no boundary of `scope` is above it.
    pub(super) fn in_scope(&self, name: &LocalName, scope: Scope) -> Option<u32> {
        self.topmost(name)
            .filter(|&at| at >= self.top().bound[scope.index()])
    }

    /// The nearest entry that bounds `scope` (0: the root).
    pub(super) fn boundary(&self, scope: Scope) -> u32 {
        self.top().bound[scope.index()]
    }

    /// Opens an element; `bounds` has bit [`Scope::bit`] set for each scope it bounds;
    /// `doubtful` is the caller's number for it (not 0) if it is a doubtful element, whose
    /// content the caller keeps or drops once the page is read, else 0. Past [`MAX_RUNS`]
    /// entries the oldest are forgotten.
    pub(super) fn push(&mut self, name: LocalName, flags: u8, bounds: u8, doubtful: u32) {
        let last = self.runs.len() - 1;
        if last > 0 && doubtful == 0 {
            let top = &mut self.runs[last];
            if top.name == name && top.flags == flags && top.count < u32::MAX {
                top.count += 1;
                self.count(flags);
                return;
            }
        }
        if self.runs.len() >= MAX_RUNS {
            self.forget_oldest();
        }
        self.count(flags);
        let at = self.runs.len() as u32;
        let below = self.top().bound;
        let mut bound = [0; SCOPES];
        for (i, b) in bound.iter_mut().enumerate() {
            *b = if bounds & (1 << i) != 0 { at } else { below[i] };
        }
        let doubt = if flags & flags::MAIN != 0 {
            0
        } else if doubtful != 0 {
            doubtful
        } else {
            self.top().doubt
        };
        let same_below = self.top_of.insert(name.clone(), at).unwrap_or(0);
        self.runs.push(Run {
            name,
            flags,
            count: 1,
            same_below,
            bound,
            doubt,
        });
    }

    fn count(&mut self, flags: u8) {
        if flags & flags::HIDES != 0 {
            self.hidden += 1;
        }
        if flags & flags::MAIN != 0 {
            self.main += 1;
        }
        if flags & flags::LINK != 0 {
            self.link += 1;
        }
    }

    /// Forgets the oldest half of the entries (the root stays): see the module documentation.
    fn forget_oldest(&mut self) {
        let gone = (self.runs.len() / 2).max(1);
        let dropped: Vec<(u8, u32)> = self
            .runs
            .drain(1..=gone)
            .map(|r| (r.flags, r.count))
            .collect();
        for (flags, count) in dropped {
            self.uncount(flags, u64::from(count));
        }
        let gone = gone as u32;
        let rebase = |at: u32| at.saturating_sub(gone);
        for run in self.runs.iter_mut().skip(1) {
            run.same_below = rebase(run.same_below);
            for b in &mut run.bound {
                *b = rebase(*b);
            }
        }
        self.top_of.retain(|_, at| {
            *at = rebase(*at);
            *at > 0
        });
    }

    /// Closes the elements above entry `at` and one element of `at`, topmost first, calling
    /// `closed` once per entry closed (a run closes all at once).
    pub(super) fn close_to(&mut self, at: u32, closed: &mut impl FnMut(Closed)) {
        if at == 0 || at as usize >= self.runs.len() {
            return;
        }
        while self.top_index() > at {
            let count = self.top().count;
            self.take_top(count, closed);
        }
        self.take_top(1, closed);
    }

    /// Closes every element above entry `at`, keeping `at` open.
    pub(super) fn close_above(&mut self, at: u32, closed: &mut impl FnMut(Closed)) {
        while self.top_index() > at {
            let count = self.top().count;
            self.take_top(count, closed);
        }
    }

    /// Closes one element of the top entry.
    pub(super) fn close_current(&mut self, closed: &mut impl FnMut(Closed)) {
        if self.runs.len() > 1 {
            self.take_top(1, closed);
        }
    }

    /// Closes `n` elements of the top entry (a dead entry is dropped without a call).
    fn take_top(&mut self, n: u32, closed: &mut impl FnMut(Closed)) {
        let last = self.runs.len() - 1;
        if last == 0 {
            return;
        }
        let run = &mut self.runs[last];
        let n = n.min(run.count);
        run.count -= n;
        let (flags, empty) = (run.flags, run.count == 0);
        if empty {
            self.drop_top();
        }
        if n > 0 {
            self.uncount(flags, u64::from(n));
            closed(Closed {
                flags,
                visible: flags & flags::HIDES == 0 && self.hidden == 0,
                in_main: self.main > 0,
                doubt: self.doubt(),
            });
        }
    }

    /// Removes the top entry, which holds no element, and any dead entries under it.
    fn drop_top(&mut self) {
        while self.runs.len() > 1 && self.top().count == 0 {
            if let Some(run) = self.runs.pop() {
                let at = self.runs.len() as u32;
                if self.top_of.get(&run.name) == Some(&at) {
                    if run.same_below == 0 {
                        self.top_of.remove(&run.name);
                    } else {
                        self.top_of.insert(run.name, run.same_below);
                    }
                }
            }
        }
    }

    /// Closes one element of entry `at` (the topmost of its name) and nothing above it: the
    /// effect of a misnested formatting end tag (`<a><div>x</a>y`: `y` is in the `div` and not
    /// in the link).
    pub(super) fn remove(&mut self, at: u32) {
        let Some(run) = self.runs.get_mut(at as usize) else {
            return;
        };
        if at == 0 || run.count == 0 {
            return;
        }
        run.count -= 1;
        let (flags, name, same_below, dead) =
            (run.flags, run.name.clone(), run.same_below, run.count == 0);
        self.uncount(flags, 1);
        if dead {
            if same_below == 0 {
                self.top_of.remove(&name);
            } else {
                self.top_of.insert(name, same_below);
            }
        }
    }

    fn uncount(&mut self, flags: u8, n: u64) {
        if flags & flags::HIDES != 0 {
            self.hidden = self.hidden.saturating_sub(n);
        }
        if flags & flags::MAIN != 0 {
            self.main = self.main.saturating_sub(n);
        }
        if flags & flags::LINK != 0 {
            self.link = self.link.saturating_sub(n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONE: u8 = 0;

    #[test]
    fn runs_share_an_entry_and_close_by_count() {
        let mut s = OpenElements::new();
        let div = LocalName::from("div");
        for _ in 0..100_000 {
            s.push(div.clone(), flags::BLOCK, NONE, 0);
        }
        s.push(LocalName::from("nav"), flags::HIDES, NONE, 0);
        assert_eq!(s.runs.len(), 3);
        assert!(s.hidden());
        let mut closes = 0;
        let nav = s.topmost(&LocalName::from("nav")).unwrap();
        s.close_to(nav, &mut |_| closes += 1);
        assert!(!s.hidden());
        for _ in 0..100_000 {
            let at = s.topmost(&div).unwrap();
            s.close_to(at, &mut |_| closes += 1);
        }
        assert_eq!(closes, 100_001);
        assert_eq!(s.topmost(&div), None);
        assert_eq!(s.current(), None);
    }

    #[test]
    fn scopes_and_removal() {
        let mut s = OpenElements::new();
        let (p, a, table) = (
            LocalName::from("p"),
            LocalName::from("a"),
            LocalName::from("table"),
        );
        s.push(p.clone(), flags::BLOCK, NONE, 0);
        s.push(a.clone(), flags::LINK, NONE, 0);
        s.push(
            table.clone(),
            flags::BLOCK,
            Scope::Default.bit() | Scope::Button.bit() | Scope::List.bit() | Scope::Table.bit(),
            0,
        );
        assert_eq!(s.in_scope(&p, Scope::Button), None);
        assert_eq!(s.in_scope(&table, Scope::Table), Some(3));
        let a_at = s.topmost(&a).unwrap();
        s.remove(a_at);
        assert!(!s.in_link());
        assert_eq!(s.topmost(&a), None);
        s.close_to(3, &mut |_| {});
        // The dead `a` entry goes with the table above it.
        assert_eq!(s.current(), Some(&p));
        assert_eq!(s.in_scope(&p, Scope::Button), Some(1));
    }

    #[test]
    fn past_the_cap_the_oldest_are_forgotten() {
        let mut s = OpenElements::new();
        let (div, span) = (LocalName::from("div"), LocalName::from("span"));
        s.push(LocalName::from("nav"), flags::HIDES, NONE, 0);
        for _ in 0..MAX_RUNS {
            s.push(div.clone(), 0, Scope::Special.bit(), 0);
            s.push(span.clone(), 0, NONE, 0);
        }
        assert!(s.runs.len() <= MAX_RUNS);
        // The hiding `nav` at the bottom is forgotten; the elements near the top still close.
        assert!(!s.hidden());
        assert_eq!(s.topmost(&LocalName::from("nav")), None);
        let top_span = s.topmost(&span).unwrap();
        assert_eq!(top_span, s.top_index());
        assert_eq!(s.topmost(&div), Some(top_span - 1));
        assert_eq!(s.boundary(Scope::Special), top_span - 1);
        let mut closes = 0;
        while let Some(at) = s.topmost(&span) {
            s.close_to(at, &mut |_| closes += 1);
        }
        assert!(closes > MAX_RUNS / 4 && s.current().is_none(), "{closes}");
    }

    #[test]
    fn doubtful_elements_reach_down_to_a_main_element() {
        let mut s = OpenElements::new();
        let (div, main, p) = (
            LocalName::from("div"),
            LocalName::from("main"),
            LocalName::from("p"),
        );
        s.push(div.clone(), flags::BLOCK, NONE, 1);
        s.push(div.clone(), flags::BLOCK, NONE, 0);
        assert_eq!(s.doubt(), 1);
        // A second doubtful `div` is not merged into the run of the first.
        s.push(div.clone(), flags::BLOCK, NONE, 2);
        assert_eq!((s.doubt(), s.runs.len()), (2, 3));
        s.push(main.clone(), flags::BLOCK | flags::MAIN, NONE, 0);
        s.push(p.clone(), flags::BLOCK, NONE, 0);
        assert_eq!(s.doubt(), 0);
        let mut after = Vec::new();
        let at = s.topmost(&main).unwrap();
        s.close_to(at, &mut |c| after.push(c.doubt));
        assert_eq!(after, [0, 2]);
        let at = s.topmost(&div).unwrap();
        s.close_to(at, &mut |c| after.push(c.doubt));
        assert_eq!(after, [0, 2, 1]);
        s.close_current(&mut |c| after.push(c.doubt));
        s.close_current(&mut |c| after.push(c.doubt));
        assert_eq!(after, [0, 2, 1, 1, 0]);
    }
}
