"""The emulated Vertex AI (Gemini models, batch prediction jobs) and the Cloud Storage JSON API its batches read
and write: the `vertex` entry point of `lowtide.emulators`."""
