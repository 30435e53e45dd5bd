# The GraphQL façade as a container image: `docker build .` or `podman build .` (docs/deploying.md).
# NODE_BASE: a Debian or Ubuntu image with Node 24 and npm on PATH (the last stage installs jemalloc with apt); CI
# passes one it builds without a registry.
ARG NODE_BASE=node:24-slim

FROM ${NODE_BASE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY deploy/image/add-graphiql-assets.sh /usr/local/bin/
# Production dependencies only, without install scripts. The optional `npm-ca` build secret is the
# build host's CA bundle, for a registry reached through a TLS-inspecting proxy; no layer keeps it.
RUN --mount=type=secret,id=npm-ca \
    if [ -s /run/secrets/npm-ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/npm-ca; fi \
 && npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && add-graphiql-assets.sh \
 && rm -rf /root/.npm

# The server's JavaScript (npm run build): TypeScript alone, at the locked version; no type check, no
# other development dependency. Running the sources on Node's type stripping would keep the stripper's
# WebAssembly memory (about 20 MiB of RSS) for the life of the process.
FROM ${NODE_BASE} AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
COPY deploy/image/build.ts deploy/image/tsconfig.json ./deploy/image/
COPY src ./src
RUN --mount=type=secret,id=npm-ca \
    if [ -s /run/secrets/npm-ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/npm-ca; fi \
 && npm install --global --ignore-scripts --no-audit --no-fund \
      "typescript@$(node -p "require('./package-lock.json').packages['node_modules/typescript'].version")" \
 && npm run build \
 && rm -rf /root/.npm

FROM ${NODE_BASE}
# jemalloc, for malloc: glibc's arenas kept 60-100 MiB of freed native memory at 200 connections (V8's compiler zones,
# socket buffers) where jemalloc gives it back. Debian's package, preloaded by name; one arena, however many cores.
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends libjemalloc2 >/dev/null \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*
# Heap sizes and malloc measured by `npm run bench:rss` (bench/README.md "Memory and heap settings"): at 200
# connections RSS peaks at 200-210 MiB on distinct ids and 234-239 MiB on the browsing mix, where semi-spaces of
# 32 MiB with glibc's malloc peaked at 240-255 and 274-297 MiB; at 9 % more CPU a request on distinct ids, about 20 %
# on the browsing mix (the smaller young generation collects more often).
# The caches, the upstream bytes held at once, the parsed documents and the log lines a stalled stdout leaves waiting
# fill at most half the old space (32 + 32 + 16 + 16 + 16 + 8 MiB) with REDIS_URL, as the Deployment runs it; without,
# the HTTP cache keeps a second in-process copy (32 MiB more). The memory limit is in deploy/kubernetes/deployment.yaml
# (docs/deploying.md).
ENV NODE_ENV=production \
    NODE_OPTIONS="--max-semi-space-size=16 --max-old-space-size=256" \
    LD_PRELOAD=libjemalloc.so.2 \
    MALLOC_CONF=narenas:1,background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0 \
    PIM_CACHE_MAX_BYTES=33554432 \
    PIM_STALE_MAX_BYTES=33554432 \
    RESPONSE_CACHE_MAX_BYTES=16777216 \
    PIM_MAX_INFLIGHT_BYTES=16777216 \
    PORT=4000
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY --from=build /app/dist ./dist
# Numeric, so Kubernetes can verify runAsNonRoot; uid 1000 is `node` in the official image.
USER 1000:1000
EXPOSE 4000
# Exec form: node is PID 1 and receives SIGTERM itself (graceful shutdown, SHUTDOWN_GRACE_MS).
CMD ["node", "dist/main.js"]
