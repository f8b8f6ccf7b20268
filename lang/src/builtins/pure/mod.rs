//! TEMPORARY (lead): placeholder until helper delivers.
pub mod hash;
pub mod regex;
pub mod versions;
pub mod json {
    pub fn from_json(s: &str) -> Result<serde_json::Value, String> { serde_json::from_str(s).map_err(|e| e.to_string()) }
    pub fn escape_json_string(s: &str, out: &mut String) { out.push_str(&serde_json::to_string(s).unwrap_or_default()) }
}
pub mod toml {
    pub fn from_toml(_s: &str) -> Result<serde_json::Value, String> { Err("todo".into()) }
}
pub mod float_fmt {
    pub fn format_float_tostring(f: f64) -> String { format!("{f:.6}") }
    pub fn format_float_json(f: f64) -> String { format!("{f}") }
    pub fn format_float_display(f: f64) -> String { format!("{f}") }
}
