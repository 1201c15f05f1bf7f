// tests/e2e/page.mjs — what the end-to-end scripts that drive the page share: a Deployment of
// small pods for a big cluster, typing a line in the terminal, and a percentile.

/// A Deployment of `replicas` nginx pods named after `name`, requesting little (10m, 16Mi), so
/// that thousands fit on a few hundred nodes.
export const deployment = (name, replicas) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  replicas: ${replicas}
  selector:
    matchLabels:
      app: ${name}
  template:
    metadata:
      labels:
        app: ${name}
    spec:
      containers:
      - name: app
        image: nginx:1.25
        resources:
          requests:
            cpu: 10m
            memory: 16Mi
`;

/// Types `line` in the page's terminal and presses Enter.
export async function type(page, line) {
  await page.fill('#terminal-input', line);
  await page.press('#terminal-input', 'Enter');
}

/// The `p` percentile (0..1) of ascending `sorted` values.
export const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))];
