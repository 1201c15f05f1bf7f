//! Go's `text/tabwriter`, as kubectl uses it: cells end at tabs, a column is aligned across
//! each run of consecutive lines that have it, and the text after a line's last tab is not
//! aligned. `get` uses minimum width 6 and padding 3; `describe` uses padding 2.

/// Aligns tab-separated `text` the way Go's tabwriter does (space padding, no flags).
pub fn tabwrite(text: &str, min_width: usize, padding: usize) -> String {
    let lines: Vec<Vec<&str>> = text.split('\n').map(|l| l.split('\t').collect()).collect();
    // The input normally ends with '\n', leaving one empty trailing "line".
    let lines = if lines.last().is_some_and(|l| l.len() == 1 && l[0].is_empty()) {
        &lines[..lines.len() - 1]
    } else {
        &lines[..]
    };
    let mut out = String::new();
    let mut widths = Vec::new();
    format(lines, 0, lines.len(), &mut widths, min_width, padding, &mut out);
    out
}

fn width(cell: &str) -> usize {
    cell.chars().count()
}

fn format(
    lines: &[Vec<&str>],
    mut line0: usize,
    line1: usize,
    widths: &mut Vec<usize>,
    min_width: usize,
    padding: usize,
    out: &mut String,
) {
    let column = widths.len();
    let mut this = line0;
    while this < line1 {
        if column + 1 >= lines[this].len() {
            this += 1;
            continue;
        }
        // A block of lines that all have a cell in this column begins here.
        write_lines(lines, line0, this, widths, out);
        line0 = this;
        let mut w = min_width;
        while this < line1 && column + 1 < lines[this].len() {
            w = w.max(width(lines[this][column]) + padding);
            this += 1;
        }
        widths.push(w);
        format(lines, line0, this, widths, min_width, padding, out);
        widths.pop();
        line0 = this;
    }
    write_lines(lines, line0, line1, widths, out);
}

fn write_lines(lines: &[Vec<&str>], from: usize, to: usize, widths: &[usize], out: &mut String) {
    for line in &lines[from..to] {
        for (j, cell) in line.iter().enumerate() {
            out.push_str(cell);
            if j + 1 < line.len() {
                let target = widths.get(j).copied().unwrap_or(0);
                let pad = target.saturating_sub(width(cell));
                out.extend(std::iter::repeat_n(' ', pad));
            }
        }
        out.push('\n');
    }
}

/// A `kubectl get` table from rows of cells.
pub fn render(rows: &[Vec<String>]) -> String {
    let text: String = rows.iter().map(|r| r.join("\t") + "\n").collect();
    tabwrite(&text, 6, 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_padded_by_three_with_a_minimum_of_six() {
        let rows = vec![
            vec!["NAME".to_string(), "READY".to_string(), "AGE".to_string()],
            vec!["web".to_string(), "1/1".to_string(), "5s".to_string()],
        ];
        assert_eq!(render(&rows), "NAME   READY   AGE\nweb    1/1     5s\n");
        let narrow = vec![vec!["A".to_string(), "B".to_string()]];
        assert_eq!(render(&narrow), "A     B\n");
    }

    #[test]
    fn a_line_without_the_column_ends_its_block() {
        let text = "Name:\tweb\nService Account:\tdefault\nIPs:\n  IP:\t10.0.0.1\nStatus:\tRunning\n";
        assert_eq!(
            tabwrite(text, 0, 2),
            "Name:             web\nService Account:  default\nIPs:\n  IP:    10.0.0.1\nStatus:  Running\n"
        );
    }
}
