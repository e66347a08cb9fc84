# Packwright image: a multi-stage build. HiGHS comes from PyPI's highsbox wheel, installed by the project's own
# script into /opt/highs in both stages, so the binary's rpath (/opt/highs/lib) holds at run time. (On a Debian 13
# base, `apt-get install libhighs-dev` works as well: the script then uses the system library.)
FROM golang:1.26.8-bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends pkg-config python3 python3-pip \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ENV PACKWRIGHT_HIGHS=bundled PACKWRIGHT_HIGHS_PREFIX=/opt/highs
RUN hack/install-highs.sh
ARG VERSION=dev
RUN PKG_CONFIG_PATH=/opt/highs/lib/pkgconfig CGO_ENABLED=1 \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/packwright ./cmd/packwright

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates libstdc++6 libgcc-s1 zlib1g \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/highs/lib/ /opt/highs/lib/
COPY --from=build /out/packwright /usr/local/bin/packwright
# Non-root, and nothing is written to the root filesystem, so readOnlyRootFilesystem: true works.
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/packwright"]
CMD ["--help"]
