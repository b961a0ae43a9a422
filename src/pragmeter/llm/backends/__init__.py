"""Chat backends. ``gguf`` lives here; the others are being moved here from ``pragmeter.harness.backends``,
whose registry (``--model NAME:TARGET``) loads them all."""
