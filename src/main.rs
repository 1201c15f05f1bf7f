//! Entry point: the sandbox page in the browser, the `kubeloop` CLI natively.

#[cfg(target_arch = "wasm32")]
fn main() {
    kubeloop::ui::start();
}

#[cfg(not(target_arch = "wasm32"))]
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(kubeloop::cli::main(&args));
}
