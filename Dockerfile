# orderd container image. Build from the repository root:
#
#   docker build -t orderd:dev \
#     --build-arg VERSION=$(git describe --tags --always --dirty) \
#     --build-arg COMMIT=$(git rev-parse HEAD) .
#
# The two build arguments stamp `orderd version` as `make build` does: .dockerignore keeps .git
# out of the context, so the build cannot read them itself. Without them the image still
# builds, and `orderd version` says "(devel)" and "commit unknown".
# GO_IMAGE and BASE_IMAGE (below) name the two base images, e.g. a mirror's copies:
#   --build-arg GO_IMAGE=mirror.example/golang:1.26-bookworm
#
# Or wrap a binary built outside, where the Go image cannot be pulled or the binary is made
# elsewhere: `make build` (static, stamped), then give bin/ as the context and BINARY=prebuilt:
#
#   make build && docker build -t orderd:dev -f Dockerfile --build-arg BINARY=prebuilt bin
#
# Stages that the final image does not need are skipped, so the Go image is never pulled that
# way; that takes BuildKit, Docker's builder since 23.0 (DOCKER_BUILDKIT=1 before that). The
# file needs no newer Dockerfile syntax than the builder's own, so it names no `# syntax=`
# image, which a machine without Docker Hub could not pull.
#
# The image runs `orderd serve`; run `keys` and `import` by replacing the command, e.g.
#   docker run --rm orderd:dev keys create --plan pro --name demo --redis-url redis://HOST:6379/0
# Without --redis-url it runs the embedded mode on the SQLite file /data/orderd.db: mount a
# volume there (-v orderd-data:/data), or the orders, keys and cancels go with the container.
# cmd/orderd's TestContainerImage builds the prebuilt way on scratch and runs all of this.

# The base images and the binary's source, declared before the first FROM so that a FROM can
# use them. BINARY is the stage the binary comes from: build (compiled here) or prebuilt.
ARG GO_IMAGE=golang:1.26-bookworm
ARG BASE_IMAGE=gcr.io/distroless/static-debian12:nonroot
ARG BINARY=build

# ---- build stage ---------------------------------------------------------------------------
# go.mod asks for go 1.26.8: an image whose Go is older fetches that toolchain itself
# (GOTOOLCHAIN=auto), which needs the network during the build.

# build compiles orderd into /out; nothing of this stage but /out reaches the final image.
FROM ${GO_IMAGE} AS build
WORKDIR /src

# Modules first, in a layer of their own: it is rebuilt only when go.mod or go.sum change,
# not on every source edit.
COPY go.mod go.sum ./
RUN go mod download

# Then the source. openapi.yaml must be in the context: openapi.go embeds it (//go:embed),
# like the Lua scripts under internal/. See .dockerignore for what is left out.
COPY . .

# Declared here, after the module download, so that a new commit reuses that layer.
ARG VERSION
ARG COMMIT

# CGO_ENABLED=0: a static binary that needs no libc, so it runs on distroless/static.
# -trimpath drops local paths; -s -w drop the symbol table and DWARF (a smaller binary);
# -X stamps the version and commit (cmd/orderd/version.go), as `make build` does.
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags="-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
      -o /out/orderd ./cmd/orderd
# An empty /data for the final image, which has no shell to make one.
RUN mkdir -p /out/data

# ---- prebuilt stage ------------------------------------------------------------------------
# prebuilt lays out /out as build does, from a context that holds a static binary named
# orderd (make build's bin/): it must be CGO_ENABLED=0, and stamped, since VERSION and COMMIT
# apply to the build stage only.
FROM scratch AS prebuilt
COPY orderd /out/orderd
# WORKDIR makes the empty directory; the final stage sets its owner.
WORKDIR /out/data

# The stage named by BINARY, under one name that COPY --from can use (it cannot take an ARG).
FROM ${BINARY} AS binary

# ---- final stage ---------------------------------------------------------------------------
# distroless/static: CA certificates (for rediss://), tzdata and /etc/passwd, and nothing
# else: no shell, no package manager, so little to patch or to attack. orderd needs no files
# at run time in Redis mode: the OpenAPI document and the Lua scripts are embedded.
FROM ${BASE_IMAGE}
COPY --from=binary /out/orderd /orderd

# The embedded mode's SQLite file (unused with ORDERD_REDIS_URL) must be on a writable path,
# in a directory that exists: /data, owned by the user below. Mount a volume there to keep it;
# no VOLUME is declared, so that the Redis mode does not get an anonymous volume it never uses.
COPY --from=binary --chown=65532:65532 /out/data /data
ENV ORDERD_DB=/data/orderd.db

# Never run as root: uid and gid 65532, distroless's nonroot. Given by number, so that it
# holds on a base without /etc/passwd (scratch), and so that Kubernetes can check it
# (deploy/kubernetes sets runAsUser: 65532 as well).
USER 65532:65532

# 8080: the API, /healthz and /readyz. 9090: /metrics, when ORDERD_METRICS_ADDR=0.0.0.0:9090.
EXPOSE 8080 9090

# The binary is the entrypoint, so that `docker run IMAGE keys create ...` works. It runs as
# PID 1 and receives SIGTERM itself, on which /readyz answers 503 for --shutdown-delay (5s)
# while requests are still served, then it drains them (--shutdown-timeout, 15s).
ENTRYPOINT ["/orderd"]
# Listen on every interface: the default, 127.0.0.1, is unreachable from outside a container.
CMD ["serve", "--addr", "0.0.0.0:8080"]
