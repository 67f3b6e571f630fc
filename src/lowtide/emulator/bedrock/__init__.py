"""The AWS APIs lowtide's Bedrock provider calls, as the emulator serves them on its one port: S3 (path-style, the
few object calls batch inference needs), the Bedrock control plane's batch inference jobs, and bedrock-runtime's
Converse, each told apart by what boto3 signs its calls with (`http.service_of`)."""
