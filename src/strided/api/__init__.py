"""The namespaces over the op layer: the Array API (``array_api``, its ``fft`` and linalg
extensions: ``fft``, ``linalg_api``), NumPy's NEP 13/18 protocols (``numpy_api``, with
``numpy_fallback`` for what has no kernel) and Dask's chunk registration (``dask_chunks``).
Compositions of ops; no kernels of their own."""
