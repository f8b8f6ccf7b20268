//! "Did you mean …?" for misspelt attributes, variables and arguments:
//! the closest candidate by edit distance, if it is close enough to help.

pub fn did_you_mean<'a>(wanted: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let limit = (wanted.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .filter(|c| *c != wanted)
        .map(|c| (strsim::damerau_levenshtein(wanted, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(b.1)))
        .map(|(_, c)| c.to_string())
}

#[cfg(test)]
mod tests {
    use super::did_you_mean;

    #[test]
    fn finds_close_names_only() {
        assert_eq!(did_you_mean("maxPod", ["maxPods", "podCidr"]), Some("maxPods".into()));
        assert_eq!(did_you_mean("xyz", ["maxPods"]), None);
    }
}
