# syntax=docker/dockerfile:1
# The gateway as an image: `docker build -t bot-module-gateway .` (or `docker compose up`, compose.yaml).
# Three stages: build (the esbuild bundles of the server and the CLI), deps (production dependencies
# only: the bundles leave PGlite and Redis's client external), runtime (no npm, no sources, user `node`).
ARG NODE_VERSION=24

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/client/package.json packages/client/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
RUN node scripts/build.mjs --force

FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/client/package.json packages/client/
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts \
  && rm -rf node_modules/@bot-module-gateway \
  && npm cache clean --force

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json LICENSE ./
# The embedded database (when DATABASE_URL is unset) and the sandbox's generated key live in /data.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# /healthz answers while the process serves; /readyz also checks the database.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 8080}/healthz`, { headers: { 'user-agent': 'docker-healthcheck' } }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
# Operator commands in a running container: docker compose exec gateway node dist/cli.mjs --help
# The V8 flags of `npm start` (package.json; scripts/node-flags.mjs): Node 20's young generation, which
# Node 24 would let grow to 128 MiB, and a heap that grows 50 % past its live size between full
# collections, not up to 4x; compiles on the main thread, and fetch's WebAssembly HTTP parser left on
# V8's baseline compiler, whose background TurboFan tier-up left ~10 MiB in a thread's malloc arena
# on Node 24 (README "Performance"; bench/README.md, S7).
CMD ["node", "--max-semi-space-size=16", "--heap-growing-percent=50", "--no-concurrent-recompilation", "--liftoff-only", "dist/main.mjs"]
