//! Paths on the machines a student types into (the sandbox's home, a node's shell, a
//! container's): the top of a Linux file system, and a path with `.` and `..` taken out.

/// The directories at the top of a Linux file system, as `ls /` lists them.
pub const ROOT_DIRS: &[&str] = &[
    "bin", "boot", "dev", "etc", "home", "lib", "media", "mnt", "opt", "proc", "root", "run", "sbin", "srv", "sys",
    "tmp", "usr", "var",
];

/// `path` (absolute) without `.` and `..` segments or repeated slashes; `..` at the top stays
/// at the top.
pub fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dots_and_repeated_slashes_go_and_nothing_climbs_above_the_top() {
        assert_eq!(normalize("/a/./b//c/../d/"), "/a/b/d");
        assert_eq!(normalize("/../../etc"), "/etc");
        assert_eq!(normalize("/"), "/");
    }
}
