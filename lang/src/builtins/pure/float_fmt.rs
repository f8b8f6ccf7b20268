//! How Nix 2.8 turns floats into text. There are two formats:
//! - `toString 1.5` gives `"1.500000"`: C's `%f` (`std::to_string`), six
//!   decimals, the full decimal expansion for big numbers;
//! - everything that prints a value, `nix-instantiate --eval` with or
//!   without `--json` and `builtins.toJSON`, uses C++ stream output with
//!   the default precision, i.e. C's `%g` with 6 significant digits:
//!   `0.1+0.2` → `0.3`, `123456789.123` → `1.23457e+08`, `3.0` → `3`,
//!   `1.0e-5` → `1e-05`.
//!
//! Non-finite values print as `inf`, `-inf`, `nan` or `-nan` in both (so
//! Nix emits invalid JSON for them; we do the same). `-0.0` prints as `-0`
//! and `-0.000000`. Interpolating a float (`"${1.5}"`) is an error in Nix
//! 2.8 ("cannot coerce a float to a string"); that is the evaluator's job.
//! Ties round to even on the exact binary value, as glibc does, which is
//! also what Rust's formatter does.

fn non_finite(x: f64) -> Option<String> {
    if x.is_nan() {
        // glibc prints the sign of a NaN; x86's default NaN (from inf-inf)
        // has it set, hence Nix's `-nan`.
        Some(if x.is_sign_negative() { "-nan" } else { "nan" }.to_string())
    } else if x.is_infinite() {
        Some(if x < 0.0 { "-inf" } else { "inf" }.to_string())
    } else {
        None
    }
}

/// `toString` of a float: C's `%f`.
pub fn format_float_tostring(x: f64) -> String {
    non_finite(x).unwrap_or_else(|| format!("{x:.6}"))
}

/// C's `%g` with the given number of significant digits (at least 1).
pub fn format_g(x: f64, precision: usize) -> String {
    if let Some(s) = non_finite(x) {
        return s;
    }
    let p = precision.max(1);
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    // Round to `p` significant digits first: the exponent after rounding
    // decides between fixed and scientific notation.
    let sci = format!("{:.*e}", p - 1, x);
    let Some((mantissa, exp)) = sci.split_once('e') else {
        return sci;
    };
    let exp: i32 = match exp.parse() {
        Ok(e) => e,
        Err(_) => return sci,
    };
    if exp < -4 || exp >= p as i32 {
        let m = strip_fraction_zeros(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{m}e{sign}{:02}", exp.unsigned_abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        strip_fraction_zeros(&format!("{x:.decimals$}")).to_string()
    }
}

/// `%g` drops trailing zeros of the fraction, and the point if nothing is
/// left after it.
fn strip_fraction_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// A float in `nix-instantiate --eval --json` output and `builtins.toJSON`.
pub fn format_float_json(x: f64) -> String {
    format_g(x, 6)
}

/// A float in plain `nix-instantiate --eval` output (same as JSON in 2.8).
pub fn format_float_display(x: f64) -> String {
    format_g(x, 6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tostring_matches_nix() {
        // Nix 2.8: toString <x>
        let cases: &[(f64, &str)] = &[
            (1.5, "1.500000"),
            (0.1, "0.100000"),
            (0.1 + 0.2, "0.300000"),
            (3.0, "3.000000"),
            (123456789.123, "123456789.123000"),
            (-0.0, "-0.000000"),
            (0.0, "0.000000"),
            (1e-7, "0.000000"),
            (1e-5, "0.000010"),
            (2.5e-5, "0.000025"),
            (0.000123456789, "0.000123"),
            (0.0078125, "0.007812"),
            (1.0 / 3.0, "0.333333"),
            (-1.5, "-1.500000"),
            (999999.5, "999999.500000"),
            (1e15, "1000000000000000.000000"),
            (1e20, "100000000000000000000.000000"),
            (1e21, "1000000000000000000000.000000"),
            (
                1e100,
                "10000000000000000159028911097599180468360808563945281389781327557747838772170381060813469985856815104.000000",
            ),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (-f64::NAN, "-nan"),
            (f64::NAN, "nan"),
        ];
        for &(x, want) in cases {
            assert_eq!(format_float_tostring(x), want, "toString {x:e}");
        }
        assert_eq!(
            format_float_tostring(1e308),
            "100000000000000001097906362944045541740492309677311846336810682903157585404911491537163328978494688899061249669721172515611590283743140088328307009198146046031271664502933027185697489699588559043338384466165001178426897626212945177628091195786707458122783970171784415105291802893207873272974885715430223118336.000000"
        );
    }

    #[test]
    fn json_matches_nix() {
        // Nix 2.8: nix-instantiate --eval --json / builtins.toJSON
        let cases: &[(f64, &str)] = &[
            (1.5, "1.5"),
            (0.1, "0.1"),
            (0.1 + 0.2, "0.3"),
            (1e20, "1e+20"),
            (1e-7, "1e-07"),
            (3.0, "3"),
            (100.0, "100"),
            (123456789.123, "1.23457e+08"),
            (-0.0, "-0"),
            (0.0, "0"),
            (1e308, "1e+308"),
            (1.797e308, "1.797e+308"),
            (f64::MAX, "1.79769e+308"),
            (1e21, "1e+21"),
            (1e16, "1e+16"),
            (1e15, "1e+15"),
            (1e100, "1e+100"),
            (123456.7, "123457"),
            (123456.5, "123456"),
            (1234567.8, "1.23457e+06"),
            (1234565.0, "1.23456e+06"),
            (12345678.9, "1.23457e+07"),
            (999999.5, "1e+06"),
            (9999995.0, "1e+07"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (2.5e-5, "2.5e-05"),
            (0.5e-10, "5e-11"),
            (0.000123456789, "0.000123457"),
            (0.0078125, "0.0078125"),
            (1.0 / 3.0, "0.333333"),
            (-1.5, "-1.5"),
            (2.5, "2.5"),
            (2.2250738585072014e-308, "2.22507e-308"),
            (4e-320, "3.99996e-320"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (-f64::NAN, "-nan"),
        ];
        for &(x, want) in cases {
            assert_eq!(format_float_json(x), want, "json {x:e}");
            assert_eq!(format_float_display(x), want, "display {x:e}");
        }
    }

    #[test]
    fn g_other_precisions() {
        assert_eq!(format_g(1234.5678, 1), "1e+03");
        assert_eq!(format_g(1234.5678, 0), "1e+03");
        assert_eq!(format_g(1234.5678, 17), "1234.5678");
        assert_eq!(format_g(0.1, 17), "0.10000000000000001");
    }
}
