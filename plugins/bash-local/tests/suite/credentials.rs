//! Credential scrubbing against the real host environment.
//!
//! The runner inherits the *process* environment, and changing that inside
//! a multi-threaded test binary is unsound. So the test re-runs this binary
//! with credentials in its environment and only the probe test selected;
//! the probe does the real checks.

use std::collections::BTreeMap;

use super::support::*;

const PROBE_MARKER: &str = "DSH_CREDENTIAL_PROBE";

#[test]
fn credentials_are_scrubbed_unless_allowed_explicit_or_not_asked() {
    let exe = std::env::current_exe().expect("test binary");
    let out = std::process::Command::new(exe)
        .args([
            "--exact",
            "suite::credentials::probe",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(PROBE_MARKER, "1")
        .env("DSH_TEST_API_KEY", "k")
        .env("dsh_test_token", "t")
        .env("DSH_TEST_SECRET_ALLOWED", "s")
        .env("DSH_TEST_PASSWORD", "p")
        .env("DSH_TEST_PLAIN", "v")
        .output()
        .expect("re-run test binary");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "probe failed:\n{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(report.contains("1 passed"), "probe did not run:\n{report}");
}

#[tokio::test(flavor = "multi_thread")]
async fn probe() {
    if std::env::var_os(PROBE_MARKER).is_none() {
        return; // only meaningful when re-run by the test above
    }
    let (_d, dir) = temp_dir();
    let mut spec = sh("env", &dir);
    spec.allow_env = vec!["DSH_TEST_SECRET_ALLOWED".into()];
    spec.env = BTreeMap::from([("DSH_TEST_PASSWORD".to_string(), "explicit".to_string())]);
    let out = run(spec).await;
    let vars: BTreeMap<&str, &str> = out
        .stdout
        .lines()
        .filter_map(|l| l.split_once('='))
        .collect();
    assert_eq!(vars.get("DSH_TEST_PLAIN"), Some(&"v"));
    assert_eq!(vars.get("DSH_TEST_SECRET_ALLOWED"), Some(&"s"));
    assert_eq!(vars.get("DSH_TEST_PASSWORD"), Some(&"explicit"));
    assert_eq!(vars.get("DSH_TEST_API_KEY"), None);
    assert_eq!(vars.get("dsh_test_token"), None);
    assert!(vars.contains_key("PATH"));

    // Without scrubbing (what the hook bridges ask for), every credential
    // is inherited, as the real CLIs hand them to hooks.
    let mut spec = sh("env", &dir);
    spec.scrub_credentials = false;
    let out = run(spec).await;
    let vars: BTreeMap<&str, &str> = out
        .stdout
        .lines()
        .filter_map(|l| l.split_once('='))
        .collect();
    assert_eq!(vars.get("DSH_TEST_API_KEY"), Some(&"k"));
    assert_eq!(vars.get("dsh_test_token"), Some(&"t"));
    assert_eq!(vars.get("DSH_TEST_PASSWORD"), Some(&"p"));
}
