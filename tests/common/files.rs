//! Store directories on disk: copies of them, and small file systems to fill.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Copies the files of directory `from` (not its subdirectories) into `to`, made if missing.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("list") {
        let entry = entry.expect("entry");
        if entry.file_type().expect("type").is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy");
        }
    }
}

/// A tmpfs of a given size mounted at a directory, unmounted on drop: a disk to fill.
pub struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts a tmpfs of `size` (`mount`'s form: `24m`) at `dir`/mnt; `None` (with a line
    /// saying `test` is skipped) where mounting needs root that this process lacks.
    pub fn mount(dir: &Path, size: &str, test: &str) -> Option<Tmpfs> {
        let mnt = dir.join("mnt");
        std::fs::create_dir(&mnt).expect("mkdir");
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&mnt)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            eprintln!("SKIPPED {test}: mounting a tmpfs needs root");
            return None;
        }
        Some(Tmpfs(mnt))
    }

    /// Where it is mounted.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}
