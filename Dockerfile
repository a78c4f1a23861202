# syntax=docker/dockerfile:1
# Base image: Node 22 (a major the test suite runs on; README: tested on 20 and 22), pinned by version and by digest so
# that a rebuild gets the same bytes. The digest is the one public Dockerfiles pin for this tag (not pulled here).
# To update: pick the newest 22.x tag, then
#   docker buildx imagetools inspect node:22.<x>.<y>-bookworm-slim --format '{{json .Manifest.Digest}}'
# and put tag and digest in both FROM lines; run `node scripts/dockerfile-dryrun.mjs` and the tests on that Node.
#
# Build: compile TypeScript and build better-sqlite3 from source (needs python3, make, g++).
FROM node:22.21.1-bookworm-slim@sha256:25b3eb23a00590b7499f2a2ce939322727fcce1b15fdd69754fcd09536a3ae2c AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# The dependencies before the sources, so that this layer is reused while only src/ changes. --ignore-scripts: the
# project's own `prepare` (the build) needs the sources, copied below; better-sqlite3's and secp256k1's native builds
# are the dependency scripts the service needs (secp256k1 builds only where it ships no prebuilt binary, e.g. arm64).
RUN npm ci --no-audit --no-fund --ignore-scripts && npm rebuild better-sqlite3 secp256k1
COPY tsconfig.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

# Run: the compiled service and its production dependencies only, as a non-root user.
FROM node:22.21.1-bookworm-slim@sha256:25b3eb23a00590b7499f2a2ce939322727fcce1b15fdd69754fcd09536a3ae2c
ENV NODE_ENV=production PORT=3000 HOST=0.0.0.0 DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json openapi.yaml ./
# The console's static files (/console; CONSOLE=false turns it off), read at start.
COPY console ./console
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
# Liveness, not readiness: a database outage makes /health/ready answer 503, and an unhealthy container gets restarted,
# which cures nothing there. Routing on readiness is the load balancer's or orchestrator's probe (README, Docker).
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/live').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
STOPSIGNAL SIGTERM
# Memory (see the README, Performance): two malloc arenas for the request, writer and checkpointer threads instead of
# one per thread, and V8's default young generation, written out. The same as `npm start` (package.json).
ENV MALLOC_ARENA_MAX=2
CMD ["node", "--max-semi-space-size=16", "dist/server.js"]
