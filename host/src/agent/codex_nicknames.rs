//! The nicknames Codex 0.171.0 gives spawned agents, and its choice rule.
//!
//! The list is the binary's own (`strings` on the `codex` of
//! `@openai/codex-linux-x64` 0.171.0: 101 names, one a line, from
//! `Euclid` to `Jason`); every nickname recorded (`C180-*`–`C186-*`:
//! Einstein, Feynman, Godel, Sagan, Mencius, Plato, Lovelace, …) is in it.
//! Codex picks one at random among those its live agents do not hold, and
//! starts the pool over once all are taken (its metric
//! `codex.multi_agent.nickname_pool_reset`); so does dsh.

/// Codex's nickname list, in the binary's order.
pub const NICKNAMES: [&str; 101] = [
    "Euclid",
    "Archimedes",
    "Ptolemy",
    "Hypatia",
    "Avicenna",
    "Averroes",
    "Aquinas",
    "Copernicus",
    "Kepler",
    "Galileo",
    "Bacon",
    "Descartes",
    "Pascal",
    "Fermat",
    "Huygens",
    "Leibniz",
    "Newton",
    "Halley",
    "Euler",
    "Lagrange",
    "Laplace",
    "Volta",
    "Gauss",
    "Ampere",
    "Faraday",
    "Darwin",
    "Lovelace",
    "Boole",
    "Pasteur",
    "Maxwell",
    "Mendel",
    "Curie",
    "Planck",
    "Tesla",
    "Poincare",
    "Noether",
    "Hilbert",
    "Einstein",
    "Raman",
    "Bohr",
    "Turing",
    "Hubble",
    "Feynman",
    "Franklin",
    "McClintock",
    "Meitner",
    "Herschel",
    "Linnaeus",
    "Wegener",
    "Chandrasekhar",
    "Sagan",
    "Goodall",
    "Carson",
    "Carver",
    "Socrates",
    "Plato",
    "Aristotle",
    "Epicurus",
    "Cicero",
    "Confucius",
    "Mencius",
    "Zeno",
    "Locke",
    "Hume",
    "Kant",
    "Hegel",
    "Kierkegaard",
    "Mill",
    "Nietzsche",
    "Peirce",
    "James",
    "Dewey",
    "Russell",
    "Popper",
    "Sartre",
    "Beauvoir",
    "Arendt",
    "Rawls",
    "Singer",
    "Anscombe",
    "Parfit",
    "Kuhn",
    "Boyle",
    "Hooke",
    "Harvey",
    "Dalton",
    "Ohm",
    "Helmholtz",
    "Gibbs",
    "Lorentz",
    "Schrodinger",
    "Heisenberg",
    "Pauli",
    "Dirac",
    "Bernoulli",
    "Godel",
    "Nash",
    "Banach",
    "Ramanujan",
    "Erdos",
    "Jason",
];

/// A name of [`NICKNAMES`] that `taken` does not hold, at random; any of
/// them once every one is taken (the pool starts over).
pub fn pick(taken: &[&str]) -> &'static str {
    let free: Vec<&'static str> = NICKNAMES
        .iter()
        .copied()
        .filter(|n| !taken.contains(n))
        .collect();
    let pool: &[&'static str] = if free.is_empty() { &NICKNAMES } else { &free };
    let r = uuid::Uuid::new_v4().as_u128();
    pool[(r % pool.len() as u128) as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pick_is_one_of_codexs_names_not_taken_until_all_are() {
        let mut taken: Vec<&str> = Vec::new();
        for _ in 0..NICKNAMES.len() {
            let n = pick(&taken);
            assert!(NICKNAMES.contains(&n));
            assert!(!taken.contains(&n), "{n} picked twice");
            taken.push(n);
        }
        // The pool starts over.
        assert!(NICKNAMES.contains(&pick(&taken)));
        for recorded in [
            "Peirce", "Raman", "Kuhn", "Rawls", "Lorentz", "Einstein", "Feynman", "Godel", "Sagan",
            "Mencius", "Plato", "Lovelace",
        ] {
            assert!(NICKNAMES.contains(&recorded), "{recorded}");
        }
    }
}
