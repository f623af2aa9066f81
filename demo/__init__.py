"""The deterministic synthetic demo dataset: drawn scenes, responses with typed hallucinations, gold
labels, simulated detectors, annotators and raters. Entry point: :func:`demo.build.build_demo_bundle`."""
