//! A node's rollout as the stdlib exports it (`nodes.<n>.rollout`): the
//! group the node is rationed in and that group's batch size. The stdlib
//! decides both from the node's roles and `settings.rollout`, so the
//! engine batches disrupting steps without knowing any role's name.
//! Deployer records store the same value (older records wrote the batch
//! size as `{"count": n}` / `{"percent": p}`; both forms are read).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The kinds of node a rollout rations, in the order their batches run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Group {
    Etcd,
    ControlPlane,
    Workers,
}

/// A batch size: a number of nodes, or a percentage of the group (rounded
/// up, at least one node).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Serial {
    Count(usize),
    Percent(u8),
}

impl Serial {
    /// From the stdlib's form: a positive integer or "N%" (1..100).
    pub fn parse(v: &serde_json::Value) -> Option<Serial> {
        if let Some(n) = v.as_u64() {
            return (n >= 1).then_some(Serial::Count(n as usize));
        }
        let p: u8 = v.as_str()?.strip_suffix('%')?.parse().ok()?;
        (1..=100).contains(&p).then_some(Serial::Percent(p))
    }

    /// How many of `group` nodes go at once.
    pub fn size(self, group: usize) -> usize {
        match self {
            Serial::Count(n) => n,
            Serial::Percent(p) => (group * p as usize).div_ceil(100),
        }
        .max(1)
    }
}

impl Serialize for Serial {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Serial::Count(n) => s.serialize_u64(*n as u64),
            Serial::Percent(p) => s.serialize_str(&format!("{p}%")),
        }
    }
}

impl<'de> Deserialize<'de> for Serial {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        let legacy = |key: &str| v.get(key).filter(|_| v.as_object().is_some_and(|o| o.len() == 1));
        let parsed = match (legacy("count"), legacy("percent")) {
            (Some(n), _) => Serial::parse(n).filter(|s| matches!(s, Serial::Count(_))),
            (_, Some(p)) => p.as_u64().and_then(|p| Serial::parse(&format!("{p}%").into())),
            _ => Serial::parse(&v),
        };
        parsed.ok_or_else(|| serde::de::Error::custom(format!("{v}: not a batch size (a positive integer or \"N%\")")))
    }
}

/// One node's rollout: its group and that group's batch size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rollout {
    pub group: Group,
    pub serial: Serial,
}

impl Rollout {
    /// Everything at once: what a node recorded without a rollout gets.
    pub const ALL_AT_ONCE: Rollout = Rollout { group: Group::Workers, serial: Serial::Percent(100) };
}

impl Default for Rollout {
    /// A closure written without the stdlib: one node at a time, never
    /// all at once by accident.
    fn default() -> Self {
        Rollout { group: Group::Workers, serial: Serial::Count(1) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serial_values() {
        assert_eq!(Serial::parse(&json!(3)), Some(Serial::Count(3)));
        assert_eq!(Serial::parse(&json!("25%")), Some(Serial::Percent(25)));
        for bad in [json!(0), json!("0%"), json!("101%"), json!("x%"), json!(-1), json!(null)] {
            assert_eq!(Serial::parse(&bad), None, "{bad}");
        }
        assert_eq!(Serial::Percent(20).size(2), 1);
        assert_eq!(Serial::Percent(20).size(11), 3);
        assert_eq!(Serial::Percent(100).size(7), 7);
        assert_eq!(Serial::Count(5).size(2), 5);
    }

    #[test]
    fn reads_the_stdlib_form_and_old_records_and_writes_the_stdlib_form() {
        let r: Rollout = serde_json::from_value(json!({"group": "control-plane", "serial": "20%"})).unwrap();
        assert_eq!(r, Rollout { group: Group::ControlPlane, serial: Serial::Percent(20) });
        let old: Rollout = serde_json::from_value(json!({"group": "etcd", "serial": {"count": 1}})).unwrap();
        assert_eq!(old, Rollout { group: Group::Etcd, serial: Serial::Count(1) });
        let old: Serial = serde_json::from_value(json!({"percent": 100})).unwrap();
        assert_eq!(old, Serial::Percent(100));
        assert_eq!(serde_json::to_value(r).unwrap(), json!({"group": "control-plane", "serial": "20%"}));
        for bad in [json!(0), json!({"count": 0}), json!({"count": 1, "percent": 2}), json!("5")] {
            assert!(serde_json::from_value::<Serial>(bad.clone()).is_err(), "{bad}");
        }
    }
}
