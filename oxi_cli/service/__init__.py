"""The warm per-user service (a long-lived process holding imports, kernels and devices) and the thin client
the `oxi` command starts as; both import only the standard library until a job needs more."""
