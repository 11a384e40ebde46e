//! The benchmarks' fingerprint generator (`benches/support/workload.rs`) draws what it was
//! fitted on: the `real` workload reproduces the measured share of 1s of every bit and the
//! shared-block factor of every block, within sampling tolerance; every workload is
//! deterministic by seed.

#[path = "../benches/support/rng.rs"]
mod rng;
#[path = "../benches/support/workload.rs"]
mod workload;

use rng::SplitMix;
use workload::{shared_block_factor, RealModel, Workload, CROWDED_VALUE};

fn draw(w: &Workload, n: usize, seed: u64) -> Vec<u64> {
    let mut rng = SplitMix(seed);
    (0..n).map(|_| w.draw(&mut rng)).collect()
}

fn bit_ones(fps: &[u64]) -> Vec<f64> {
    (0..64)
        .map(|i| fps.iter().filter(|&&fp| (fp >> i) & 1 == 1).count() as f64 / fps.len() as f64)
        .collect()
}

#[test]
fn real_reproduces_the_measured_bit_frequencies() {
    let w = Workload::parse("real").expect("real");
    let Workload::Real(model) = &w else {
        panic!("not real")
    };
    let fps = draw(&w, 200_000, 1);
    let ones = bit_ones(&fps);
    for (i, (&got, &want)) in ones.iter().zip(&model.measured_bit_ones).enumerate() {
        assert!(
            (got - want).abs() < 0.03,
            "bit {i}: {got:.3} of the draws are 1, measured {want:.3}"
        );
    }
    // The bits are biased: uniform fingerprints would have all within 0.5 +- 0.01.
    let (min, max) = ones
        .iter()
        .fold((1.0f64, 0.0f64), |(lo, hi), &p| (lo.min(p), hi.max(p)));
    assert!(min < 0.4 && max > 0.6, "{min} {max}");
}

#[test]
fn real_reproduces_the_measured_shared_block_factor() {
    let model = RealModel::fitted();
    let w = Workload::Real(Box::new(RealModel::fitted()));
    let fps = draw(&w, 300_000, 2);
    for b in 0..4 {
        let want = model.measured_factor[b];
        let exact = model.factor(b);
        let got = shared_block_factor(&fps, b);
        assert!(
            (exact / want - 1.0).abs() < 0.05,
            "block {b}: the model's factor {exact:.2}, measured {want:.2}"
        );
        assert!(
            (got / want - 1.0).abs() < 0.15,
            "block {b}: factor {got:.2} of the draws, measured {want:.2}"
        );
        assert!(want > 2.0, "block {b}: measured factor {want}");
    }
}

#[test]
fn uniform_has_a_factor_near_one() {
    let fps = draw(&Workload::Uniform, 300_000, 3);
    for b in 0..4 {
        let f = shared_block_factor(&fps, b);
        assert!((0.9..=1.1).contains(&f), "block {b}: {f}");
    }
}

#[test]
fn templated_pages_share_block_values_more_often_than_real() {
    let real = draw(&Workload::parse("real").expect("real"), 200_000, 4);
    let templated = draw(
        &Workload::parse("templated").expect("templated"),
        200_000,
        4,
    );
    for b in 0..4 {
        let (r, t) = (
            shared_block_factor(&real, b),
            shared_block_factor(&templated, b),
        );
        assert!(t > 1.5 * r, "block {b}: templated {t:.1}, real {r:.1}");
    }
}

#[test]
fn crowded_puts_its_share_in_one_block_value() {
    let w = Workload::parse("crowded:0.05").expect("crowded");
    let fps = draw(&w, 200_000, 5);
    let landing = fps.iter().filter(|&&fp| w.in_crowded_group(fp)).count();
    let share = landing as f64 / fps.len() as f64;
    assert!((0.045..=0.055).contains(&share), "{share}");
    assert!(fps
        .iter()
        .filter(|&&fp| w.in_crowded_group(fp))
        .all(|&fp| (fp >> 48) as u16 == CROWDED_VALUE));
    // Outside block 0 the bits stay uniform.
    for b in 1..4 {
        let f = shared_block_factor(&fps, b);
        assert!((0.9..=1.1).contains(&f), "block {b}: {f}");
    }
}

#[test]
fn every_workload_is_deterministic_by_seed() {
    for name in ["uniform", "real", "templated", "crowded:0.2"] {
        let w = Workload::parse(name).expect("workload");
        assert_eq!(draw(&w, 1_000, 7), draw(&w, 1_000, 7), "{name}");
        assert_ne!(draw(&w, 1_000, 7), draw(&w, 1_000, 8), "{name}");
    }
}

#[test]
fn exact_duplicates_are_one_percent_except_for_uniform() {
    let real = Workload::parse("real").expect("real");
    let mut rng = SplitMix(9);
    let copies: Vec<u64> = (0..10_000u64)
        .filter_map(|i| real.exact_duplicate(i, &mut rng).map(|j| (i, j)))
        .map(|(i, j)| {
            assert!(j < i);
            j
        })
        .collect();
    assert_eq!(copies.len(), 100);
    assert!((0..10_000u64).all(|i| Workload::Uniform.exact_duplicate(i, &mut rng).is_none()));
}

#[test]
fn bad_workload_names_are_refused() {
    for bad in ["", "Real", "crowded", "crowded:1.5", "crowded:x"] {
        assert!(Workload::parse(bad).is_err(), "{bad}");
    }
}
