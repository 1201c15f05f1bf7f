//! `$(VAR)` references, as the kubelet expands them in a container's `command`, `args` and
//! `env` values before the process starts (Kubernetes' `expansion` package, not a shell):
//! `$(NAME)` becomes the variable's value, `$$` is an escaped `$` (so `$$(NAME)` stays
//! `$(NAME)`), and a reference to an undefined variable stays as written.

/// Expands the references in `text` with the variables in `env` (the last of a name wins).
pub fn expand(text: &str, env: &[(String, String)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        match after.chars().next() {
            // `$$`: an escaped `$`.
            Some('$') => {
                out.push('$');
                rest = &after[1..];
            }
            Some('(') => match after.find(')') {
                Some(close) => {
                    let name = &after[1..close];
                    match env.iter().rev().find(|(k, _)| k == name) {
                        Some((_, value)) => out.push_str(value),
                        None => {
                            out.push_str("$(");
                            out.push_str(name);
                            out.push(')');
                        }
                    }
                    rest = &after[close + 1..];
                }
                // An unclosed reference stays as written.
                None => {
                    out.push_str("$(");
                    rest = &after[1..];
                }
            },
            // Any other `$` is just a character.
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Every word of a command line expanded.
pub fn expand_all(words: &[String], env: &[(String, String)]) -> Vec<String> {
    words.iter().map(|w| expand(w, env)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Vec<(String, String)> {
        vec![("SPECIAL_LEVEL_KEY".into(), "very".into()), ("SPECIAL_TYPE_KEY".into(), "charm".into())]
    }

    #[test]
    fn dollar_paren_references_expand_from_the_containers_environment() {
        assert_eq!(expand("$(SPECIAL_LEVEL_KEY) $(SPECIAL_TYPE_KEY)", &env()), "very charm");
        assert_eq!(expand("level=$(SPECIAL_LEVEL_KEY)!", &env()), "level=very!");
    }

    #[test]
    fn a_doubled_dollar_escapes_a_reference_and_an_undefined_one_stays_as_written() {
        assert_eq!(expand("$$(SPECIAL_LEVEL_KEY)", &env()), "$(SPECIAL_LEVEL_KEY)");
        assert_eq!(expand("$(NOPE) and $(SPECIAL_TYPE_KEY)", &env()), "$(NOPE) and charm");
        assert_eq!(expand("$$$(SPECIAL_TYPE_KEY)", &env()), "$charm");
    }

    #[test]
    fn shell_variables_and_unclosed_references_are_left_for_the_shell() {
        assert_eq!(expand("echo $HOME ${X} $", &env()), "echo $HOME ${X} $");
        assert_eq!(expand("$(SPECIAL_TYPE_KEY", &env()), "$(SPECIAL_TYPE_KEY");
        assert_eq!(expand("€$(SPECIAL_TYPE_KEY)€", &env()), "€charm€");
    }
}
