import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Strata.Core

// Settings, saved as they change. The theme, speculative decoding, the local API server, the
// pinned share and prefetching apply at once, sampling and threads to the next reply; the model
// folder, memory budget, KV precision, expert reads and kernels need the model reloaded (the
// dialog says so). The memory plan below them is what a reload would allocate.
Dialog {
    id: dialog
    property AppController app
    readonly property AppSettings settings: app.settings
    title: qsTr("Settings")
    modal: true
    standardButtons: Dialog.Close
    width: Math.min(parent ? parent.width - 80 : 560, 560)
    // Taller than the window would be once the content grows: it scrolls inside instead.
    height: Math.min(implicitHeight, parent ? parent.height - 80 : implicitHeight)
    anchors.centerIn: parent

    component Caption: Label { color: Theme.textDim; Layout.alignment: Qt.AlignRight }

    ScrollView {
        anchors.fill: parent
        contentWidth: availableWidth
        GridLayout {
            width: parent.width
            columns: 2
            columnSpacing: 12
            rowSpacing: 8

            Caption { text: qsTr("Theme") }
            ComboBox {
                objectName: "themeChoice"
                // The values AppSettings.theme takes, in the order of the labels.
                readonly property var themes: ["system", "light", "dark"]
                model: [qsTr("Follow the system"), qsTr("Light"), qsTr("Dark")]
                currentIndex: Math.max(0, themes.indexOf(dialog.settings.theme))
                onActivated: index => dialog.settings.theme = themes[index]
                Accessible.name: qsTr("Theme: follow the system, light or dark")
            }
            Caption { text: qsTr("Model folder") }
            RowLayout {
                Layout.fillWidth: true
                TextField {
                    id: folder
                    Layout.fillWidth: true
                    text: dialog.settings.modelFolder
                    onEditingFinished: dialog.settings.modelFolder = text
                    Accessible.name: qsTr("Model folder")
                }
                Button { text: qsTr("Browse…"); onClicked: folderDialog.open() }
            }
            Caption { text: qsTr("Memory budget (GB)") }
            SpinBox {
                from: 0; to: 1024
                value: Math.round(dialog.settings.memoryBudgetGb)
                onValueModified: dialog.settings.memoryBudgetGb = value
                Accessible.name: qsTr("Memory budget in gigabytes, 0 for none")
            }
            Caption { text: qsTr("KV precision") }
            ComboBox {
                model: ["f32", "bf16", "f16"]
                currentIndex: Math.max(0, model.indexOf(dialog.settings.kvPrecision))
                onActivated: dialog.settings.kvPrecision = currentText
                Accessible.name: qsTr("KV cache precision")
            }
            Caption { text: qsTr("Expert reads") }
            ComboBox {
                objectName: "ioMode"
                Layout.fillWidth: true
                readonly property var modes: ["direct", "buffered", "uring"]
                model: [qsTr("Direct I/O"), qsTr("Buffered (page cache)"), qsTr("io_uring")]
                currentIndex: Math.max(0, modes.indexOf(dialog.settings.ioMode))
                onActivated: index => dialog.settings.ioMode = modes[index]
                Accessible.name: qsTr("How streamed experts are read from disk")
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Only for a converted model under a memory budget. Direct I/O bypasses the page cache; io_uring keeps several reads in flight.")
            }
            Caption { text: qsTr("Pinned experts (%)") }
            SpinBox {
                objectName: "pinnedPercent"
                from: 0; to: 90; stepSize: 5
                value: dialog.settings.pinnedPercent
                onValueModified: dialog.settings.pinnedPercent = value
                Accessible.name: qsTr("Share of the expert memory pinned for the most used experts")
                ToolTip.visible: hovered
                ToolTip.text: qsTr("The most used experts stay in RAM for good; the rest of the expert memory is a cache. Applies at once.")
            }
            Caption { text: qsTr("Prefetch") }
            Switch {
                objectName: "prefetch"
                checked: dialog.settings.prefetch
                onToggled: dialog.settings.prefetch = checked
                text: qsTr("Read the next layer's likely experts early")
                Accessible.name: text
            }
            Caption { text: qsTr("Kernels") }
            ComboBox {
                objectName: "kernelPath"
                Layout.fillWidth: true
                readonly property var paths: ["auto", "dequantize"]
                model: [qsTr("Integer (fastest the CPU has)"), qsTr("Exact (dequantize)")]
                currentIndex: Math.max(0, paths.indexOf(dialog.settings.kernelPath))
                onActivated: index => dialog.settings.kernelPath = paths[index]
                Accessible.name: qsTr("Kernels for 4- and 8-bit weights")
            }
            Caption { text: qsTr("Memory plan"); Layout.alignment: Qt.AlignRight | Qt.AlignTop }
            ColumnLayout {
                objectName: "memoryPlan"
                Layout.fillWidth: true
                spacing: 2
                Repeater {
                    model: dialog.app.plan.rows
                    delegate: RowLayout {
                        required property var modelData
                        Layout.fillWidth: true
                        Label { text: modelData.name; color: Theme.textDim; Layout.fillWidth: true }
                        Label { text: modelData.value; color: Theme.text }
                    }
                }
                Label {
                    objectName: "memoryPlanSummary"
                    Layout.fillWidth: true
                    wrapMode: Text.Wrap
                    text: dialog.app.plan.summary
                    color: dialog.app.plan.fits ? Theme.text : Theme.danger
                }
            }
            // A whole row: hidden items take no grid cell.
            RowLayout {
                Layout.columnSpan: 2
                Layout.alignment: Qt.AlignRight
                visible: dialog.app.reloadNeeded
                Label { text: qsTr("These take effect when the model is reloaded."); color: Theme.accent }
                Button { text: qsTr("Reload model"); onClicked: dialog.app.loadModel() }
            }

            Caption { text: qsTr("Threads (0 = all)") }
            SpinBox {
                from: 0; to: 256
                value: dialog.settings.threads
                onValueModified: dialog.settings.threads = value
                Accessible.name: qsTr("Threads")
            }
            Caption { text: qsTr("Speculative decoding") }
            ComboBox {
                objectName: "speculationMode"
                // The values AppSettings.speculationMode takes, in the order of the labels.
                readonly property var modes: ["auto", "off"]
                model: [qsTr("Automatic"), qsTr("Off")]
                currentIndex: Math.max(0, modes.indexOf(dialog.settings.speculationMode))
                onActivated: index => dialog.settings.speculationMode = modes[index]
                Accessible.name: qsTr("Speculative decoding: automatic (self-tuning, lossless) or off")
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Drafters guess tokens that one forward pass then checks; the replies are the same either way. Automatic keeps each drafter only while it measurably speeds decoding up.")
            }
            Caption { text: qsTr("MTP draft length") }
            SpinBox {
                objectName: "mtpDepth"
                from: 1; to: 8
                enabled: dialog.settings.speculationMode === "auto"
                value: dialog.settings.mtpDepth
                onValueModified: dialog.settings.mtpDepth = value
                Accessible.name: qsTr("Tokens the MTP head drafts per round")
            }
            Caption { text: qsTr("Temperature") }
            RowLayout {
                Slider {
                    id: temperature
                    from: 0; to: 2; stepSize: 0.05
                    value: dialog.settings.temperature
                    onMoved: dialog.settings.temperature = value
                    Accessible.name: qsTr("Temperature")
                }
                Label { text: temperature.value.toFixed(2); color: Theme.text }
            }
            Caption { text: qsTr("Top-p") }
            RowLayout {
                Slider {
                    id: topP
                    from: 0.05; to: 1; stepSize: 0.01
                    value: dialog.settings.topP
                    onMoved: dialog.settings.topP = value
                    Accessible.name: qsTr("Top-p")
                }
                Label { text: topP.value.toFixed(2); color: Theme.text }
            }
            Caption { text: qsTr("Top-k (0 = off)") }
            SpinBox {
                from: 0; to: 1000
                value: dialog.settings.topK
                onValueModified: dialog.settings.topK = value
                Accessible.name: qsTr("Top-k")
            }
            Caption { text: qsTr("Max new tokens") }
            SpinBox {
                from: 1; to: 32768; stepSize: 64; editable: true
                value: dialog.settings.maxTokens
                onValueModified: dialog.settings.maxTokens = value
                Accessible.name: qsTr("Maximum new tokens")
            }
            Caption { text: qsTr("Thinking") }
            Switch {
                checked: dialog.settings.thinking
                onToggled: dialog.settings.thinking = checked
                Accessible.name: qsTr("Let the model think before answering")
            }
            Caption { text: qsTr("System prompt"); Layout.alignment: Qt.AlignRight | Qt.AlignTop }
            TextArea {
                Layout.fillWidth: true
                Layout.preferredHeight: 80
                wrapMode: TextEdit.Wrap
                text: dialog.settings.systemPrompt
                onEditingFinished: dialog.settings.systemPrompt = text
                background: Rectangle { radius: 4; color: Theme.surface; border.color: Theme.border }
                Accessible.name: qsTr("System prompt")
            }

            // The OpenAI-compatible API over the loaded model, on loopback only. Applied at once:
            // a change restarts the server.
            Rectangle {
                Layout.columnSpan: 2
                Layout.fillWidth: true
                Layout.topMargin: 8
                height: 1
                color: Theme.border
            }
            Label {
                Layout.columnSpan: 2
                text: qsTr("Local API server")
                color: Theme.text
                font.bold: true
            }
            Item { width: 1; height: 1 }  // the switch says what it does
            Switch {
                objectName: "serverEnabled"
                text: qsTr("Serve the OpenAI-compatible API")
                checked: dialog.settings.serverEnabled
                onToggled: dialog.settings.serverEnabled = checked
                Accessible.name: qsTr("Serve the OpenAI-compatible API on this computer")
            }
            Caption { text: qsTr("Port") }
            SpinBox {
                objectName: "serverPort"
                from: 1; to: 65535; editable: true
                value: dialog.settings.serverPort
                // A port is not a quantity: no thousands separator.
                textFromValue: (value, locale) => String(value)
                valueFromText: (text, locale) => parseInt(text)
                onValueModified: dialog.settings.serverPort = value
                Accessible.name: qsTr("Port on 127.0.0.1")
            }
            Caption { text: qsTr("API key") }
            TextField {
                objectName: "serverApiKey"
                Layout.fillWidth: true
                echoMode: TextInput.Password
                placeholderText: qsTr("Optional: clients then send it as a bearer token")
                text: dialog.settings.serverApiKey
                onEditingFinished: dialog.settings.serverApiKey = text
                Accessible.name: qsTr("API key, optional")
            }
            Caption { text: qsTr("Slots") }
            SpinBox {
                objectName: "serverSlots"
                from: 1; to: 16
                value: dialog.settings.serverSlots
                onValueModified: dialog.settings.serverSlots = value
                Accessible.name: qsTr("Requests generating at once")
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Requests the server answers at once; they share the model's forward passes with each other and with this chat.")
            }
            Caption { text: qsTr("Status"); Layout.alignment: Qt.AlignRight | Qt.AlignTop }
            Label {
                objectName: "serverStatus"
                readonly property EngineBridge engine: dialog.app.engine
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                text: engine.serverRunning ? qsTr("Listening on %1").arg(engine.serverUrl)
                    : engine.serverError !== "" ? engine.serverError
                    : dialog.settings.serverEnabled ? qsTr("Starts when a model is loaded")
                    : qsTr("Off")
                color: engine.serverError !== "" && !engine.serverRunning ? Theme.danger
                    : engine.serverRunning ? Theme.text : Theme.textDim
            }
        }
    }

    FolderDialog {
        id: folderDialog
        onAccepted: dialog.settings.modelFolder = selectedFolder.toString().replace(/^file:\/\//, "")
    }
}
