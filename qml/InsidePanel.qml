import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Strata.Core

// Inside the model: the expert heatmap (layers x experts; colour = heat, stripe = tier) with the
// routing view (the experts the latest token, or a held one, chose are marked; the last tokens
// are chips below), tier gauges, cache hit rate, decode speed, time to first token (with the
// prompt's progress while it is read) and speculative decoding.
Rectangle {
    id: panel
    property TierMonitor monitor
    property RoutingMonitor routing
    property SpeculationMonitor speculation
    property PrefillMonitor prefill
    color: Theme.sidebar

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: 14
        spacing: 12

        Label { text: qsTr("Inside the model"); color: Theme.text; font.pixelSize: 16; font.bold: true }

        Row {
            spacing: 18
            Column {
                Label { text: panel.monitor.tokensPerSecond.toFixed(1); color: Theme.text; font.pixelSize: 26 }
                Label { text: qsTr("tokens/s"); color: Theme.textDim; font.pixelSize: 11 }
            }
            // The last reply's: from the request to its first token, the prompt's reading included.
            Column {
                visible: panel.prefill !== null && panel.prefill.hasTimeToFirstToken
                Label {
                    objectName: "timeToFirstToken"
                    text: panel.prefill ? panel.prefill.timeToFirstTokenText : ""
                    color: Theme.text
                    font.pixelSize: 26
                }
                Label { text: qsTr("to first token"); color: Theme.textDim; font.pixelSize: 11 }
            }
            Column {
                visible: panel.monitor.streaming
                Label { text: (panel.monitor.hitRate * 100).toFixed(1) + " %"; color: Theme.text; font.pixelSize: 26 }
                Label { text: qsTr("cache hit rate"); color: Theme.textDim; font.pixelSize: 11 }
            }
        }
        // While the prompt is read: its progress, in the place of the speed history below.
        Column {
            objectName: "prefillProgress"
            visible: panel.prefill !== null && panel.prefill.reading
            Layout.fillWidth: true
            Layout.preferredHeight: 32  // the speed history's height: nothing below moves
            spacing: 6
            Label {
                objectName: "prefillText"
                text: panel.prefill ? panel.prefill.progressText : ""
                color: Theme.text
                font.pixelSize: 12
            }
            Rectangle {
                width: parent.width
                height: 4
                radius: 2
                color: Theme.surface
                Rectangle {
                    width: parent.width * (panel.prefill ? panel.prefill.fraction : 0)
                    height: parent.height
                    radius: 2
                    color: Theme.accent
                }
            }
        }
        // Decode speed, one bar per reply sample.
        Row {
            id: spark
            visible: !(panel.prefill !== null && panel.prefill.reading)
            Layout.fillWidth: true
            height: 32
            spacing: 1
            readonly property var samples: panel.monitor.speedHistory
            readonly property real peak: Math.max.apply(null, samples.concat([1]))
            Repeater {
                model: spark.samples.length
                delegate: Rectangle {
                    required property int index
                    width: Math.max(2, (spark.width - 60) / 60)
                    height: Math.max(2, spark.height * spark.samples[index] / spark.peak)
                    anchors.bottom: parent.bottom
                    color: Theme.accent
                    opacity: 0.8
                }
            }
        }

        SpeculationBlock {
            objectName: "speculationBlock"
            Layout.fillWidth: true
            monitor: panel.speculation
            visible: panel.speculation !== null && panel.speculation.drafters.length > 0
        }

        Label {
            text: !panel.monitor.hasHeat ? qsTr("Experts")
                  : panel.monitor.streaming ? qsTr("Experts: %1 layers × %2").arg(heatmap.layers).arg(heatmap.experts)
                  : qsTr("Experts: %1 layers × %2, all in RAM").arg(heatmap.layers).arg(heatmap.experts)
            color: Theme.textDim
            font.pixelSize: 12
        }
        Rectangle {
            Layout.fillWidth: true
            Layout.fillHeight: true
            Layout.minimumHeight: 120
            color: Theme.window
            border.color: Theme.border
            radius: 4
            HeatmapItem {
                id: heatmap
                objectName: "heatmap"
                anchors.fill: parent
                anchors.margins: 1
                monitor: panel.monitor
                routing: panel.routing
                visible: panel.monitor.hasHeat
                HoverHandler { id: heatHover }
                ToolTip.visible: heatHover.hovered && tip.length > 0
                ToolTip.text: tip
                property string tip: {
                    const c = heatHover.hovered ? cellAt(heatHover.point.position.x, heatHover.point.position.y) : {}
                    if (c.layer === undefined) return ""
                    const chosen = c.weight === undefined ? ""
                        : qsTr("\ngate %1, #%2 for “%3”").arg(c.weight.toFixed(3)).arg(c.rank).arg(c.token)
                    return qsTr("layer %1 · expert %2 · heat %3%4").arg(c.layer).arg(c.expert)
                        .arg(c.heat.toFixed(2)).arg(c.tier ? " · " + c.tier : "") + chosen
                }
            }
            Label {
                visible: !panel.monitor.hasHeat
                anchors.fill: parent
                anchors.margins: 16
                wrapMode: Text.Wrap
                horizontalAlignment: Text.AlignHCenter
                verticalAlignment: Text.AlignVCenter
                color: Theme.textDim
                text: qsTr("The expert heatmap appears when a Mixture-of-Experts model is loaded.")
            }
        }
        // Routing view: the latest tokens, newest on the right; the heatmap marks the experts of
        // the highlighted one. A click holds a token while the reply goes on.
        ColumnLayout {
            objectName: "routingView"
            visible: panel.monitor.hasHeat && panel.routing !== null && panel.routing.tokens.length > 0
            Layout.fillWidth: true
            spacing: 4
            RowLayout {
                Layout.fillWidth: true
                Label {
                    Layout.fillWidth: true
                    text: panel.routing && !panel.routing.following
                          ? qsTr("■ experts chosen for “%1” (held)").arg(panel.routing.shownText)
                          : qsTr("■ experts chosen for the latest token")
                    color: Theme.textDim
                    font.pixelSize: 11
                    elide: Text.ElideRight
                }
                TextButton {
                    objectName: "followLatest"
                    visible: panel.routing !== null && !panel.routing.following
                    text: qsTr("Follow latest")
                    padding: 0
                    font.pixelSize: 11
                    onClicked: panel.routing.follow()
                }
            }
            Item {
                Layout.fillWidth: true
                Layout.preferredHeight: 20
                clip: true
                Row {
                    id: trail
                    objectName: "routingTrail"
                    // Right-aligned: when the chips are wider than the panel the oldest go.
                    x: parent.width - width
                    spacing: 3
                    Repeater {
                        model: panel.routing ? panel.routing.trail : null
                        delegate: Rectangle {
                            id: chip
                            required property int index
                            required property string text
                            readonly property bool shown: index === panel.routing.shownIndex
                            width: chipText.implicitWidth + 10
                            height: 20
                            radius: 4
                            color: shown ? Theme.accent : Theme.surface
                            Accessible.role: Accessible.Button
                            Accessible.name: qsTr("Show the experts of token %1").arg(text)
                            Label {
                                id: chipText
                                anchors.centerIn: parent
                                text: chip.text
                                font.family: Theme.mono
                                font.pixelSize: 11
                                color: chip.shown ? Theme.accentText : Theme.text
                            }
                            MouseArea {
                                anchors.fill: parent
                                cursorShape: Qt.PointingHandCursor
                                onClicked: panel.routing.hold(chip.index)
                            }
                        }
                    }
                }
            }
        }
        // Legend: heat ramp, then the tier stripe colours.
        Flow {
            visible: panel.monitor.hasHeat
            Layout.fillWidth: true
            spacing: 10
            Row {
                spacing: 4
                Label { text: qsTr("cold"); color: Theme.textDim; font.pixelSize: 11 }
                Rectangle {
                    width: 60; height: 10; anchors.verticalCenter: parent.verticalCenter
                    gradient: Gradient {
                        orientation: Gradient.Horizontal
                        GradientStop { position: 0.0; color: "#1e212d" }
                        GradientStop { position: 0.3; color: "#58288c" }
                        GradientStop { position: 0.6; color: "#cd414b" }
                        GradientStop { position: 0.85; color: "#fa9628" }
                        GradientStop { position: 1.0; color: "#fcf096" }
                    }
                }
                Label { text: qsTr("hot"); color: Theme.textDim; font.pixelSize: 11 }
            }
            Repeater {
                model: panel.monitor.streaming ? tierLegend : []
                readonly property var tierLegend: [["#b388ff", qsTr("pinned")], ["#66bb6a", qsTr("RAM")], ["#4dd0e1", qsTr("loading")], ["#ffb74d", qsTr("page cache")], ["#464a56", qsTr("disk")]]
                delegate: Row {
                    required property var modelData
                    spacing: 3
                    Rectangle { width: 10; height: 4; color: modelData[0]; anchors.verticalCenter: parent.verticalCenter }
                    Label { text: modelData[1]; color: Theme.textDim; font.pixelSize: 11 }
                }
            }
        }

        Gauge {
            Layout.fillWidth: true
            visible: panel.monitor.streaming
            label: qsTr("Pinned RAM")
            used: panel.monitor.pinnedBytes
            budget: panel.monitor.pinnedBudget
            barColor: "#b388ff"
        }
        Gauge {
            Layout.fillWidth: true
            visible: panel.monitor.streaming
            label: qsTr("RAM cache")
            used: panel.monitor.cacheBytes
            budget: panel.monitor.cacheBudget
            barColor: "#66bb6a"
        }
        // The OS page cache's share of the expert files (estimated from sampled pages): a tier the
        // engine does not manage, shown so a user sees what the OS keeps (buffered reads).
        Gauge {
            objectName: "pageCacheGauge"
            Layout.fillWidth: true
            visible: panel.monitor.streaming && panel.monitor.pageCacheBytes >= 0
            label: qsTr("Page cache")
            used: Math.max(0, panel.monitor.pageCacheBytes)
            budget: panel.monitor.pageCacheTotal
            barColor: "#ffb74d"
        }
        // Disk reads: now (the last second), the disk's speed while reading, and in all.
        Column {
            objectName: "diskReads"
            Layout.fillWidth: true
            visible: panel.monitor.streaming
            spacing: 2
            function rate(bytesPerSecond) {
                return bytesPerSecond >= 1e9 ? (bytesPerSecond / 1e9).toFixed(2) + " GB/s"
                                             : (bytesPerSecond / 1e6).toFixed(0) + " MB/s"
            }
            Row {
                width: parent.width
                Label { text: qsTr("Disk reads"); color: Theme.textDim; width: parent.width / 2 }
                Label {
                    objectName: "diskReadRate"
                    width: parent.width / 2
                    horizontalAlignment: Text.AlignRight
                    color: Theme.text
                    text: parent.parent.rate(panel.monitor.readRate)
                }
            }
            Label {
                width: parent.width
                horizontalAlignment: Text.AlignRight
                color: Theme.textDim
                font.pixelSize: 11
                text: qsTr("%1 while reading · %2 read").arg(parent.rate(panel.monitor.readThroughput))
                      .arg((panel.monitor.bytesRead / 1073741824).toFixed(2) + " GiB")
            }
        }
        // Not streaming: the header shows the resident size (the snapshot counts experts twice there).
        Gauge {
            Layout.fillWidth: true
            visible: panel.monitor.streaming
            label: qsTr("Resident weights")
            used: panel.monitor.residentBytes
            barColor: Theme.textDim
        }
        // The open conversation's KV cache against what the memory plan keeps for one
        // conversation (its context length); it grows with every token and is saved with the chat.
        Gauge {
            objectName: "kvGauge"
            Layout.fillWidth: true
            visible: panel.monitor.kvReservedBytes > 0
            label: qsTr("KV cache · %1 tokens").arg(Number(panel.monitor.kvTokens).toLocaleString(Qt.locale(), "f", 0))
            used: panel.monitor.kvBytes
            budget: panel.monitor.kvReservedBytes
            barColor: "#4fc3f7"
        }
    }
}
