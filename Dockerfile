# The service image. Build: docker build -t ghcr.io/kubeopera/gitops-scaffolder:0.1.0 .
FROM node:20.19-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY src src
COPY libs libs
COPY migrations migrations
COPY bench bench
COPY test/support test/support
RUN npx nest build

FROM node:20.19-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends git openssh-client ca-certificates \
 && rm -rf /var/lib/apt/lists/* && useradd --uid 10001 --create-home scaffolder
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist dist
COPY bin bin
COPY templates templates
USER 10001
ENV NODE_ENV=production PORT=8080 WORK_DIR=/work
EXPOSE 8080
CMD ["node", "dist/src/main.js"]
