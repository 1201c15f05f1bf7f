//! The manifest gallery: small examples that each show one behaviour of the cluster.

pub struct Example {
    pub id: &'static str,
    pub title: &'static str,
    pub manifest: &'static str,
}

pub const EXAMPLES: &[Example] = &[
    Example {
        id: "deployment",
        title: "A Deployment of 3 nginx pods, with a Service",
        manifest: "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 3
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        ports:
        - containerPort: 80
        resources:
          requests:
            cpu: 250m
            memory: 64Mi
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
  ports:
  - port: 80
    targetPort: 80
",
    },
    Example {
        id: "nginx",
        title: "A web server Pod (nginx)",
        manifest: "apiVersion: v1
kind: Pod
metadata:
  name: web
  labels:
    app: web
spec:
  containers:
  - name: nginx
    image: nginx:1.25
    ports:
    - containerPort: 80
",
    },
    Example {
        id: "crash",
        title: "A container that keeps crashing",
        manifest: "apiVersion: v1
kind: Pod
metadata:
  name: crasher
spec:
  containers:
  - name: app
    image: busybox:1.36
    command: [\"sh\", \"-c\", \"echo starting; sleep 3; exit 1\"]
",
    },
    Example {
        id: "typo",
        title: "An image that does not exist",
        manifest: "apiVersion: v1
kind: Pod
metadata:
  name: typo
spec:
  containers:
  - name: web
    image: nginx:9.99
",
    },
    Example {
        id: "greedy",
        title: "Too big for any node",
        manifest: "apiVersion: v1
kind: Pod
metadata:
  name: greedy
spec:
  containers:
  - name: app
    image: nginx:1.25
    resources:
      requests:
        cpu: \"16\"
        memory: 1Gi
",
    },
    Example {
        id: "mistakes",
        title: "Spot the mistakes (apply it: kubectl names each, the editor marks its line)",
        manifest: "apiVersion: apps/v1
kind: Deployment
metadata:
  name: broken
spec:
  replicas: -2
  selector:
    matchLabels:
      app: broken
  template:
    metadata:
      labels:
        app: broken
    spec:
      containers:
      - name: web
        image: nginx:1.25
        ports:
        - containerport: 80
",
    },
    Example {
        id: "pi",
        title: "Run to completion (compute pi)",
        manifest: "apiVersion: v1
kind: Pod
metadata:
  name: pi
spec:
  restartPolicy: Never
  containers:
  - name: pi
    image: perl:5.34.0
    command: [\"perl\", \"-Mbignum=bpi\", \"-wle\", \"print bpi(2000)\"]
",
    },
];
