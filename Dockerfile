# One image with every edgeplane binary: edgeplane-manager (the entrypoint),
# edgeplane-healthcheck (the IngressDaemonSet health checker), edgeplane-cni-ipam
# (the CNI IPAM plugin, which the chart's optional DaemonSet installs on nodes),
# edgeplane-cloudsim and kubectl-edgeplane.
#
# Stage 1 compiles them with hack/build-image-binaries.sh, the script
# `make image-binaries` runs outside a container; stage 2 is distroless/static
# (no shell, no package manager) running as the nonroot user (uid 65532).
# `make image` builds it with docker or podman.

FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS=linux
ARG TARGETARCH=amd64
ARG VERSION=dev
WORKDIR /src
ENV GOTOOLCHAIN=local CGO_ENABLED=0
COPY go.mod go.sum ./
RUN go mod download
COPY apis/ apis/
COPY cmd/ cmd/
COPY internal/ internal/
COPY hack/build-image-binaries.sh hack/go-build-tags hack/
RUN VERSION=$VERSION hack/build-image-binaries.sh $TARGETOS/$TARGETARCH

FROM gcr.io/distroless/static-debian12:nonroot
ARG TARGETOS=linux
ARG TARGETARCH=amd64
COPY --from=build /src/bin/image/${TARGETOS}_${TARGETARCH}/ /
USER 65532:65532
ENTRYPOINT ["/edgeplane-manager"]
