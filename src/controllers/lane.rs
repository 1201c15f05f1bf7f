//! A controller's lane: what it wants against what it has, and what it is doing about it.

/// Desired against actual for one owner, as its lane in the page shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lane {
    pub want: i32,
    pub have: i32,
    /// `create 1`, `delete 2`, or empty when in sync.
    pub action: String,
}

impl std::fmt::Display for Lane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "want {} · have {}", self.want, self.have)?;
        if !self.action.is_empty() {
            write!(f, " → {}", self.action)?;
        }
        Ok(())
    }
}
